package producer

import (
	"runtime"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment/vfs"
)

// Publish benchmark shape: batches of benchBatch records of benchValue
// bytes, at most benchWindow unacknowledged, to one durable shard on a
// MemFS (so the figure is the broker's CPU cost, not a disk's).
const (
	benchBatch  = 100
	benchValue  = 100
	benchWindow = 4
)

// BenchmarkPublish compares plain batched publishing (engine.Stream.Publish)
// with idempotent publishing of the same batches, in the same run: one op
// is one batch of each, the two kinds alternating in chunks of
// benchChunk batches (each to its own stream of one engine), so drift on
// a shared machine falls on both alike. Reported: records/s of each and
// idem-x-plain, the idempotent rate over the plain one (the goal is above
// 0.9: idempotence costs under 10%).
func BenchmarkPublish(b *testing.B) {
	e, plain, idem := benchStreams(b)
	defer e.Close()
	m := New(e, Options{InFlightMax: benchWindow})
	id, _ := m.Register()
	recs := benchRecords()
	pw, iw := newWindowWaiter(), newWindowWaiter()
	seq := uint64(0)
	var plainTime, idemTime time.Duration
	b.ReportAllocs()
	b.SetBytes(2 * benchBatch * benchValue)
	b.ResetTimer()
	for done := 0; done < b.N; done += benchChunk {
		n := min(benchChunk, b.N-done)
		plainTime += timeBatches(b, pw, n, func() error { return plain.Publish(recs, pw) })
		idemTime += timeBatches(b, iw, n, func() error {
			err := m.Publish(id, idem, 0, seq, recs, iw)
			seq++
			return err
		})
	}
	b.StopTimer()
	plainRate := float64(b.N*benchBatch) / plainTime.Seconds()
	idemRate := float64(b.N*benchBatch) / idemTime.Seconds()
	b.ReportMetric(plainRate, "plain-recs/s")
	b.ReportMetric(idemRate, "idem-recs/s")
	b.ReportMetric(idemRate/plainRate, "idem-x-plain")
}

// benchChunk is how many batches of one kind run before the other's turn.
const benchChunk = 500

// timeBatches publishes n batches with at most benchWindow unacknowledged
// and returns how long they took to be acknowledged.
func timeBatches(b *testing.B, w *windowWaiter, n int, publish func() error) time.Duration {
	began := time.Now()
	for range n {
		w.sem <- struct{}{}
		if err := publish(); err != nil {
			b.Fatal(err)
		}
	}
	for range benchWindow {
		w.sem <- struct{}{}
	}
	took := time.Since(began)
	for range benchWindow {
		<-w.sem
	}
	return took
}

// benchStreams opens an engine on a MemFS (fsync None: the figure is the
// broker's CPU, not a disk's) with two durable one-shard streams.
func benchStreams(b *testing.B) (*engine.Engine, *engine.Stream, *engine.Stream) {
	e, err := engine.Open(engine.Options{FS: vfs.NewMem(), Dir: "/data", Fsync: shardlog.None(), SegmentBytes: 8 << 20})
	if err != nil {
		b.Fatal(err)
	}
	var out [2]*engine.Stream
	for i, name := range []string{"plain", "idem"} {
		id := engine.StreamID{Tenant: "acme", Namespace: "bench", Name: name}
		if _, err := e.CreateStream(id, engine.StreamConfig{Durable: true}); err != nil {
			b.Fatal(err)
		}
		out[i], _ = e.Stream(id)
	}
	return e, out[0], out[1]
}

func benchRecords() []engine.Record {
	recs := make([]engine.Record, benchBatch)
	for i := range recs {
		recs[i].Value = make([]byte, benchValue)
	}
	return recs
}

// windowWaiter admits benchWindow unacknowledged batches.
type windowWaiter struct{ sem chan struct{} }

func newWindowWaiter() *windowWaiter { return &windowWaiter{sem: make(chan struct{}, benchWindow)} }

func (w *windowWaiter) Published([]engine.AckRun, error) { <-w.sem }
func (w *windowWaiter) Acked(Ack, error)                 { <-w.sem }

// BenchmarkProducerMemory measures what the Manager holds per producer that
// has written one batch to one shard: the live heap with the Manager and
// without it, over many producers, divided.
func BenchmarkProducerMemory(b *testing.B) {
	const producers = 20_000
	e, _ := engine.Open(engine.Options{})
	defer e.Close()
	e.CreateStream(sid, engine.StreamConfig{})
	s, _ := e.Stream(sid)
	recs := batchOf("x", 1)
	w := &countWaiter{}
	for range b.N {
		m := New(e, Options{IdleTimeout: time.Hour})
		for range producers {
			id, err := m.Register()
			if err != nil {
				b.Fatal(err)
			}
			if err := m.Publish(id, s, 0, 0, recs, w); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		with := liveHeap()
		runtime.KeepAlive(m)
		m = nil
		b.ReportMetric(float64(with-liveHeap())/producers, "bytes/producer")
		b.StartTimer()
	}
}

func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
