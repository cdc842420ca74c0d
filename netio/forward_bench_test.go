package netio

import (
	"encoding/binary"
	"errors"
	"slices"
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
// The forwarded benchmarks measure their baselines in the same run: b.N
// is split into rounds, each running the baselines (untimed) and then its
// share of the forwarded publishes, and each figure is the median of the
// rounds' (a shared machine's load drifts over seconds, and weighs on
// both alike this way). The single publish's baselines are the direct
// publish's p50 on the same pair and a bare loopback round trip's:
// excess-µs is the forwarded p50 less both, what forwarding costs beyond
// the one round trip between brokers it cannot avoid (goal <= 30). The
// pipelined batches' is the same batches through the leader: x-direct is
// the forwarded bandwidth over the direct one.
//
//	go test -run '^$' -bench 'Benchmark(Direct|Forwarded)Publish' -benchtime 20000x ./netio/

func BenchmarkDirectPublish(b *testing.B) {
	_, owner, ref := benchForwardingPair(b)
	b.Run("single-latency", func(b *testing.B) {
		c := dialClientAt(b, owner.Addr().String())
		b.ReportAllocs()
		b.ResetTimer()
		p := roundTripP50(b, c, ref, b.N)
		b.StopTimer()
		b.ReportMetric(micros(p), "p50-µs")
	})
	b.Run("batch64", func(b *testing.B) { benchWindow(b, owner, ref, 64, 16) })
}

func BenchmarkForwardedPublish(b *testing.B) {
	ingress, owner, ref := benchForwardingPair(b)
	in, own := ingress.Addr().String(), owner.Addr().String()
	b.Run("single-latency", func(b *testing.B) { benchForwardedLatency(b, in, own, ref) })
	b.Run("batch64", func(b *testing.B) { benchForwardedWindow(b, in, own, ref, 64, 16) })
}

// benchRounds is how many rounds a forwarded benchmark splits n into: up
// to 8, of at least least each.
func benchRounds(n, least int) int { return max(1, min(8, n/least)) }

// shareOf is round r's share of n split into rounds.
func shareOf(n, rounds, r int) int {
	share := n / rounds
	if r < n%rounds {
		share++
	}
	return share
}

// median is the median of d (sorted in place).
func median(d []float64) float64 {
	slices.Sort(d)
	return d[len(d)/2]
}

// benchForwardedLatency publishes one record at a time through the
// ingress's client address, in rounds that each first measure a loopback
// round trip and the same publishes through the owner's.
func benchForwardedLatency(b *testing.B, ingress, owner string, ref wire.StreamRef) {
	probe := newRTTProbe(b)
	fc, dc := dialClientAt(b, ingress), dialClientAt(b, owner)
	rounds := benchRounds(b.N, 500)
	var fwd, direct, rtt, excess []float64
	b.ReportAllocs()
	b.ResetTimer()
	for r := range rounds {
		n := shareOf(b.N, rounds, r)
		b.StopTimer()
		rt, d := probe.p50(b, n), roundTripP50(b, dc, ref, n)
		b.StartTimer()
		f := roundTripP50(b, fc, ref, n)
		fwd, direct, rtt = append(fwd, micros(f)), append(direct, micros(d)), append(rtt, micros(rt))
		excess = append(excess, micros(f-d-rt))
	}
	b.StopTimer()
	b.ReportMetric(median(fwd), "p50-µs")
	b.ReportMetric(median(direct), "direct-p50-µs")
	b.ReportMetric(median(rtt), "rtt-p50-µs")
	b.ReportMetric(median(excess), "excess-µs")
}

// benchForwardedWindow is benchWindow through the ingress's client
// address, in rounds that each first run the same frames through the
// owner's.
func benchForwardedWindow(b *testing.B, ingress, owner string, ref wire.StreamRef, batch, window int) {
	fc, dc := dialClientAt(b, ingress), dialClientAt(b, owner)
	frame := publishFrame(ref, batch)
	frames := (b.N + batch - 1) / batch
	rounds := benchRounds(frames, 64)
	var ratios []float64
	b.SetBytes(benchRecordBytes)
	b.ReportAllocs()
	b.ResetTimer()
	for r := range rounds {
		n := shareOf(frames, rounds, r)
		b.StopTimer()
		d := publishWindow(b, dc, frame, n, window)
		b.StartTimer()
		f := publishWindow(b, fc, frame, n, window)
		ratios = append(ratios, d.Seconds()/f.Seconds())
	}
	b.StopTimer()
	b.ReportMetric(median(ratios), "x-direct")
}

// benchForwardingStream is the stream the forwarding benchmarks publish
// to: one shard, kept in memory, led by "b".
var benchForwardingStream = engine.StreamID{Tenant: "bench", Namespace: "net", Name: "forwarded"}

// benchForwardingPair starts "a" and "b" in this process, with peer.TCP
// transports on loopback.
func benchForwardingPair(b testing.TB) (ingress, owner *Server, ref wire.StreamRef) {
	var book sync.Map
	resolve := func(id string) (string, error) {
		if a, ok := book.Load(id); ok {
			return a.(string), nil
		}
		return "", errors.New("no such broker")
	}
	servers := map[string]*Server{}
	for _, name := range []string{"a", "b"} {
		s, tr := startBenchBroker(b, name, resolve)
		book.Store(name, tr.Addr().String())
		servers[name] = s
	}
	return servers["a"], servers["b"], wireRef(benchForwardingStream)
}

// startBenchBroker starts broker name: its peer.TCP transport and client
// server on loopback, an engine holding benchForwardingStream, and a
// Forwarder to "b" over the transport, stopped when the benchmark ends.
func startBenchBroker(b testing.TB, name string, resolve func(string) (string, error)) (*Server, *peer.TCP) {
	tr, err := peer.Listen(peer.Config{ID: name, Addr: "127.0.0.1:0", Resolve: resolve})
	if err != nil {
		b.Fatal(err)
	}
	r := newRoutes(name, "b")
	fwd, err := NewForwarder(ForwarderConfig{Peers: tr, Router: r})
	if err != nil {
		b.Fatal(err)
	}
	e, err := engine.Open(engine.Options{Owner: r, Forward: fwd, MemoryShardBytes: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.CreateStream(benchForwardingStream, engine.StreamConfig{Shards: 1}); err != nil {
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
	return s, tr
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
	c := dialClientAt(b, s.Addr().String())
	frame := publishFrame(ref, batch)
	b.SetBytes(benchRecordBytes)
	b.ReportAllocs()
	b.ResetTimer()
	publishWindow(b, c, frame, (b.N+batch-1)/batch, window)
}

// publishWindow writes frame n times on c, with up to window frames
// awaiting their ack, and returns how long until the last ack.
func publishWindow(b *testing.B, c *benchConn, frame []byte, n, window int) time.Duration {
	slots := make(chan struct{}, window)
	t0 := time.Now()
	acked := awaitAcks(c, n, slots)
	out := make([]byte, 0, len(frame))
	for i := range n {
		slots <- struct{}{}
		out = appendFrame(out[:0], frame, i)
		if _, err := c.nc.Write(out); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-acked; err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}

// micros is d in microseconds, for a benchmark's metric.
func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
