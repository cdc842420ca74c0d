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

// plainRecsPerSec is the plain publish rate of this run, the baseline the
// idempotent row reports its ratio against.
var plainRecsPerSec float64

// BenchmarkPublish compares plain batched publishing (engine.Stream.Publish)
// with idempotent publishing of the same batches, in the same run. One op
// is one batch. The idempotent row reports x-plain: its records/s over the
// plain row's (the goal is above 0.9: idempotence costs under 10%).
func BenchmarkPublish(b *testing.B) {
	b.Run("plain", func(b *testing.B) {
		_, s, done := benchStream(b)
		defer done()
		w := newWindowWaiter()
		recs := benchRecords()
		runPublish(b, w, func() error { return s.Publish(recs, w) })
		plainRecsPerSec = reportRate(b, 0)
	})
	b.Run("idempotent", func(b *testing.B) {
		e, s, done := benchStream(b)
		defer done()
		m := New(e, Options{InFlightMax: benchWindow})
		id, _ := m.Register()
		w := newWindowWaiter()
		recs := benchRecords()
		seq := uint64(0)
		runPublish(b, w, func() error {
			err := m.Publish(id, s, 0, seq, recs, w)
			seq++
			return err
		})
		reportRate(b, plainRecsPerSec)
	})
}

func benchStream(b *testing.B) (*engine.Engine, *engine.Stream, func()) {
	e, err := engine.Open(engine.Options{FS: vfs.NewMem(), Dir: "/data", Fsync: shardlog.Periodic(0)})
	if err != nil {
		b.Fatal(err)
	}
	e.CreateStream(sid, engine.StreamConfig{Durable: true})
	s, _ := e.Stream(sid)
	return e, s, func() { e.Close() }
}

func benchRecords() []engine.Record {
	recs := make([]engine.Record, benchBatch)
	for i := range recs {
		recs[i].Value = make([]byte, benchValue)
	}
	return recs
}

func runPublish(b *testing.B, w *windowWaiter, publish func() error) {
	b.ReportAllocs()
	b.SetBytes(benchBatch * benchValue)
	b.ResetTimer()
	for range b.N {
		w.sem <- struct{}{}
		if err := publish(); err != nil {
			b.Fatal(err)
		}
	}
	for range benchWindow {
		w.sem <- struct{}{}
	}
	b.StopTimer()
}

func reportRate(b *testing.B, baseline float64) float64 {
	rate := float64(b.N*benchBatch) / b.Elapsed().Seconds()
	b.ReportMetric(rate, "recs/s")
	if baseline > 0 {
		b.ReportMetric(rate/baseline, "x-plain")
	}
	return rate
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
