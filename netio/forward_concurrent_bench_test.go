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
// BenchmarkForwardedPublish16 runs in rounds, each first running the same
// publishes through the leader on the same pair of brokers (untimed), and
// reports x-direct, the median of the rounds' forwarded bandwidth over
// the direct one (goal >= 0.7). BenchmarkLoopbackRTT is the bare round
// trip the latency figures are read against.
//
//	go test -run '^$' -bench 'Benchmark(Direct|Forwarded)Publish16|BenchmarkLoopbackRTT' -benchtime 20000x ./netio/

// benchPublishers is how many client connections publish at once.
const benchPublishers = 16

func BenchmarkDirectPublish16(b *testing.B) {
	_, owner, ref := benchForwardingPair(b)
	pubs := dialPublishers(b, owner.Addr().String(), ref)
	b.SetBytes(benchRecordBytes)
	b.ReportAllocs()
	b.ResetTimer()
	publishConcurrently(b, pubs, b.N)
}

func BenchmarkForwardedPublish16(b *testing.B) {
	ingress, owner, ref := benchForwardingPair(b)
	benchPublishers16(b, ingress.Addr().String(), owner.Addr().String(), ref)
}

// benchPublishers16 is BenchmarkForwardedPublish16 through the client
// addresses of an ingress and the owner.
func benchPublishers16(b *testing.B, ingress, owner string, ref wire.StreamRef) {
	direct, forwarded := dialPublishers(b, owner, ref), dialPublishers(b, ingress, ref)
	rounds := benchRounds(b.N, 2000)
	var ratios []float64
	b.SetBytes(benchRecordBytes)
	b.ReportAllocs()
	b.ResetTimer()
	for r := range rounds {
		n := shareOf(b.N, rounds, r)
		b.StopTimer()
		d := publishConcurrently(b, direct, n)
		b.StartTimer()
		f := publishConcurrently(b, forwarded, n)
		ratios = append(ratios, d.Seconds()/f.Seconds())
	}
	b.StopTimer()
	b.ReportMetric(median(ratios), "x-direct")
}

func BenchmarkLoopbackRTT(b *testing.B) {
	probe := newRTTProbe(b)
	b.ReportAllocs()
	b.ResetTimer()
	p := probe.p50(b, b.N)
	b.StopTimer()
	b.ReportMetric(micros(p), "p50-µs")
}

// rttProbe is a bare Go echo over one loopback TCP connection: the least
// one more hop between brokers can add to a publish's round trip.
type rttProbe struct {
	c       net.Conn
	msg     []byte
	samples []time.Duration
}

func newRTTProbe(b *testing.B) *rttProbe {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
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
	b.Cleanup(func() { c.Close() })
	return &rttProbe{c: c, msg: make([]byte, benchRecordBytes)}
}

// p50 is the p50 of n round trips of one record-sized message.
func (p *rttProbe) p50(b *testing.B, n int) time.Duration {
	p.samples = p.samples[:0]
	for range n {
		t0 := time.Now()
		if _, err := p.c.Write(p.msg); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(p.c, p.msg); err != nil {
			b.Fatal(err)
		}
		p.samples = append(p.samples, time.Since(t0))
	}
	return p50(p.samples)
}

// benchPublisher is one synchronous publishing connection.
type benchPublisher struct {
	c     *benchConn
	frame []byte
}

// dialPublishers connects benchPublishers clients to the client address
// addr, each with its own publish frame.
func dialPublishers(b *testing.B, addr string, ref wire.StreamRef) []benchPublisher {
	pubs := make([]benchPublisher, benchPublishers)
	for i := range pubs {
		pubs[i] = benchPublisher{c: dialClientAt(b, addr), frame: publishFrame(ref, 1)}
	}
	return pubs
}

// publishConcurrently has the publishers make n publishes between them,
// each waiting for its ack before the next, and returns how long they
// took.
func publishConcurrently(b *testing.B, pubs []benchPublisher, n int) time.Duration {
	var wg sync.WaitGroup
	errs := make(chan error, len(pubs))
	t0 := time.Now()
	for i := range pubs {
		wg.Add(1)
		go func(p *benchPublisher, n int) {
			defer wg.Done()
			if err := p.publish(n); err != nil {
				errs <- err
			}
		}(&pubs[i], shareOf(n, len(pubs), i))
	}
	wg.Wait()
	took := time.Since(t0)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return took
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
