package netio

import (
	"encoding/binary"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// The 16-publisher benchmarks: benchPublishers client connections, each
// publishing one 1 KiB record at a time and waiting for its ack (many
// synchronous producers, the shape of most clients), to the shard's
// leader (Direct) or through the broker that forwards to it (Forwarded).
// BenchmarkForwardedPublish16 runs the direct publishes first, on the same
// pair of brokers, and reports x-direct: its bandwidth over theirs (goal
// >= 0.7). BenchmarkLoopbackRTT is the round trip both latency figures are
// read against.
//
//	go test -run '^$' -bench 'Benchmark(Direct|Forwarded)Publish16|BenchmarkLoopbackRTT' -benchtime 20000x ./netio/

// benchPublishers is how many client connections publish at once.
const benchPublishers = 16

func BenchmarkDirectPublish16(b *testing.B) {
	_, owner, ref := benchForwardingPair(b)
	pubs := dialPublishers(b, owner, ref)
	b.SetBytes(benchRecordBytes)
	b.ReportAllocs()
	b.ResetTimer()
	publishConcurrently(b, pubs, b.N)
}

func BenchmarkForwardedPublish16(b *testing.B) {
	ingress, owner, ref := benchForwardingPair(b)
	direct := publishRate(b, dialPublishers(b, owner, ref), b.N)
	pubs := dialPublishers(b, ingress, ref)
	b.SetBytes(benchRecordBytes)
	b.ReportAllocs()
	b.ResetTimer()
	publishConcurrently(b, pubs, b.N)
	b.StopTimer()
	forwarded := float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(direct*benchRecordBytes/1e6, "direct-MB/s")
	b.ReportMetric(forwarded/direct, "x-direct")
}

// BenchmarkLoopbackRTT is a bare Go echo's round trip of one record-sized
// message over loopback TCP, b.N times: the least one more hop between
// brokers can add to a publish's round trip.
func BenchmarkLoopbackRTT(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = io.Copy(c, c)
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	msg := make([]byte, benchRecordBytes)
	samples := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if _, err := c.Write(msg); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(c, msg); err != nil {
			b.Fatal(err)
		}
		samples = append(samples, time.Since(t0))
	}
	b.StopTimer()
	b.ReportMetric(micros(p50(samples)), "p50-µs")
}

// benchPublisher is one synchronous publishing connection.
type benchPublisher struct {
	c     *benchConn
	frame []byte
}

// dialPublishers connects benchPublishers clients to s, each with its own
// publish frame.
func dialPublishers(b *testing.B, s *Server, ref wire.StreamRef) []benchPublisher {
	pubs := make([]benchPublisher, benchPublishers)
	for i := range pubs {
		pubs[i] = benchPublisher{c: dialBench(b, s), frame: publishFrame(ref, 1)}
	}
	return pubs
}

// publishRate is what publishConcurrently does, in publishes per second,
// untimed by the benchmark: the baseline of a forwarded run.
func publishRate(b *testing.B, pubs []benchPublisher, n int) float64 {
	t0 := time.Now()
	publishConcurrently(b, pubs, n)
	return float64(n) / time.Since(t0).Seconds()
}

// publishConcurrently has the publishers make n publishes between them,
// each waiting for its ack before the next.
func publishConcurrently(b *testing.B, pubs []benchPublisher, n int) {
	var wg sync.WaitGroup
	errs := make(chan error, len(pubs))
	for i := range pubs {
		share := n / len(pubs)
		if i < n%len(pubs) {
			share++
		}
		wg.Add(1)
		go func(p *benchPublisher) {
			defer wg.Done()
			if err := p.publish(share); err != nil {
				errs <- err
			}
		}(&pubs[i])
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// publish makes n publishes, one at a time.
func (p *benchPublisher) publish(n int) error {
	for range n {
		id := binary.LittleEndian.Uint64(p.frame[8:]) + 1
		binary.LittleEndian.PutUint64(p.frame[8:], id)
		if _, err := p.c.nc.Write(p.frame); err != nil {
			return err
		}
		if t, err := p.c.readFrame(); err != nil || t != wire.TypePublishAck {
			return errUnexpected(t, err)
		}
	}
	return nil
}

func errUnexpected(t wire.Type, err error) error {
	if err != nil {
		return err
	}
	return &wire.Error{Code: wire.CodeInternal, Message: "unexpected " + t.String()}
}
