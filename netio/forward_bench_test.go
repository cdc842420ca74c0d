package netio

import (
	"encoding/binary"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio/wire"
)

// The forwarding benchmarks publish to a shard "b" leads, through "b"
// itself (Direct) and through "a", which forwards every publish to "b"
// over a loopback peer.TCP connection (Forwarded): the same engines,
// stream and client, both brokers in this process. What to read is the
// difference: a forwarded publish costs one more hop each way and the
// relay's work on "b". Allocations count both brokers and the client.
//
// The forwarded single publish measures its baselines in the same run,
// right before its own timed part: the direct publish's p50 on the same
// pair and a bare loopback round trip's (rawRTT). excess-µs is the
// forwarded p50 less both: what forwarding costs beyond the one round
// trip between brokers it cannot avoid (goal <= 30).
//
//	go test -run '^$' -bench 'Benchmark(Direct|Forwarded)Publish' -benchtime 20000x ./netio/

func BenchmarkDirectPublish(b *testing.B) {
	_, owner, ref := benchForwardingPair(b)
	b.Run("single-latency", func(b *testing.B) { benchRoundTrips(b, owner, ref) })
	b.Run("batch64", func(b *testing.B) { benchWindow(b, owner, ref, 64, 16) })
}

func BenchmarkForwardedPublish(b *testing.B) {
	ingress, owner, ref := benchForwardingPair(b)
	b.Run("single-latency", func(b *testing.B) {
		rtt := measureRaw(b, false, true).rttP50
		direct := roundTripP50(b, dialBench(b, owner), ref, latencySamples)
		p := benchRoundTrips(b, ingress, ref)
		b.ReportMetric(micros(direct), "direct-p50-µs")
		b.ReportMetric(micros(rtt), "rtt-p50-µs")
		b.ReportMetric(float64((p - direct - rtt).Microseconds()), "excess-µs")
	})
	b.Run("batch64", func(b *testing.B) { benchWindow(b, ingress, ref, 64, 16) })
}

// benchForwardingPair starts "a" and "b" with peer.TCP transports on
// loopback and a memory stream of one shard, led by "b".
func benchForwardingPair(b *testing.B) (ingress, owner *Server, ref wire.StreamRef) {
	var mu sync.Mutex
	addrs := map[string]string{}
	resolve := func(id string) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if a, ok := addrs[id]; ok {
			return a, nil
		}
		return "", errors.New("no such broker")
	}
	id := engine.StreamID{Tenant: "bench", Namespace: "net", Name: "forwarded"}
	servers := map[string]*Server{}
	for _, name := range []string{"a", "b"} {
		tr, err := peer.Listen(peer.Config{ID: name, Addr: "127.0.0.1:0", Resolve: resolve})
		if err != nil {
			b.Fatal(err)
		}
		mu.Lock()
		addrs[name] = tr.Addr().String()
		mu.Unlock()
		r := newRoutes(name, "b")
		fwd, err := NewForwarder(ForwarderConfig{Peers: tr, Router: r})
		if err != nil {
			b.Fatal(err)
		}
		e, err := engine.Open(engine.Options{Owner: r, Forward: fwd, MemoryShardBytes: 64 << 20})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.CreateStream(id, engine.StreamConfig{Shards: 1}); err != nil {
			b.Fatal(err)
		}
		s, err := NewServer(Config{Addr: "127.0.0.1:0", Engine: e, Owner: r, Forwarder: fwd, BrokerID: name,
			Multicore: true, EventLoops: benchLoops()})
		if err != nil {
			b.Fatal(err)
		}
		tr.Handle(s)
		if err := s.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			s.Stop(b.Context())
			tr.Close()
			e.Close()
		})
		servers[name] = s
	}
	return servers["a"], servers["b"], wireRef(id)
}

// benchRoundTrips publishes one record of benchRecordBytes at a time and
// waits for its ack, b.N times, and returns the p50.
func benchRoundTrips(b *testing.B, s *Server, ref wire.StreamRef) time.Duration {
	c := dialBench(b, s)
	b.ReportAllocs()
	b.ResetTimer()
	p := roundTripP50(b, c, ref, b.N)
	b.StopTimer()
	b.ReportMetric(micros(p), "p50-µs")
	return p
}

// roundTripP50 is the p50 of n publishes of one record, each waiting for
// its ack.
func roundTripP50(b *testing.B, c *benchConn, ref wire.StreamRef, n int) time.Duration {
	frame := publishFrame(ref, 1)
	samples := make([]time.Duration, 0, n)
	for i := range n {
		binary.LittleEndian.PutUint64(frame[8:], uint64(i+1))
		t0 := time.Now()
		if _, err := c.nc.Write(frame); err != nil {
			b.Fatal(err)
		}
		if t, err := c.readFrame(); err != nil || t != wire.TypePublishAck {
			b.Fatalf("ack: %v %v", t, err)
		}
		samples = append(samples, time.Since(t0))
	}
	return p50(samples)
}

// benchWindow publishes b.N records in frames of batch, with up to window
// frames awaiting their ack.
func benchWindow(b *testing.B, s *Server, ref wire.StreamRef, batch, window int) {
	c := dialBench(b, s)
	frame := publishFrame(ref, batch)
	frames := (b.N + batch - 1) / batch
	slots := make(chan struct{}, window)
	acked := make(chan error, 1)
	go func() {
		for range frames {
			t, err := c.readFrame()
			if err == nil && t != wire.TypePublishAck {
				err = errors.New("unexpected " + t.String())
			}
			if err != nil {
				acked <- err
				return
			}
			<-slots
		}
		acked <- nil
	}()
	b.SetBytes(benchRecordBytes)
	b.ReportAllocs()
	b.ResetTimer()
	out := make([]byte, 0, len(frame))
	for i := range frames {
		slots <- struct{}{}
		out = appendFrame(out[:0], frame, i)
		if _, err := c.nc.Write(out); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-acked; err != nil {
		b.Fatal(err)
	}
}

// micros is d in microseconds, for a benchmark's metric.
func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
