package group

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// Benchmark shape: records of benchValue bytes, taken benchBatch at a time,
// the two readers alternating every benchChunk records.
const (
	benchValue = 100
	benchBatch = 100
	benchChunk = 20_000
)

// BenchmarkGroupDrain measures consumers draining b.N published records
// through a group (poll 100, ack them) against a plain engine.Subscription
// reading the same records from the earliest, in the same run: the two
// alternate every benchChunk records, so drift on a shared machine falls
// on both alike. One op is one record, read once by each. Reported:
// records/s of each and group-x-sub, the group's rate over the
// subscription's (the goal for one consumer: at least 0.5). The stream and
// the group logs are on a MemFS with fsync None: the figure is the
// broker's CPU, not a disk's (acks never wait for the cursor log's sync).
func BenchmarkGroupDrain(b *testing.B) {
	for _, consumers := range []int{1, 8} {
		b.Run(fmt.Sprint("consumers=", consumers), func(b *testing.B) {
			e, sh := benchShard(b)
			defer e.Close()
			sub, err := sh.Subscribe(engine.SubscribeOptions{Start: engine.StartEarliest})
			if err != nil {
				b.Fatal(err)
			}
			defer sub.Close()
			none := shardlog.None() // like the stream's: a MemFS sync copies the whole file
			m := New(e, Options{Fsync: &none})
			defer m.Close()
			if err := m.Create(key("bench"), engine.StartEarliest, 0); err != nil {
				b.Fatal(err)
			}
			r := &benchReaders{sub: sub, m: m, consumers: consumers, buf: make([]byte, 0, 64<<10)}
			b.ReportAllocs()
			b.SetBytes(2 * benchValue)
			b.ResetTimer()
			for target := int64(0); target < int64(b.N); {
				target = min(target+benchChunk, int64(b.N))
				r.subTime += r.readSubscription(b, target)
				r.groupTime += r.drainGroup(b, target)
			}
			b.StopTimer()
			subRate := float64(b.N) / r.subTime.Seconds()
			groupRate := float64(r.groupRead.Load()) / r.groupTime.Seconds()
			b.ReportMetric(subRate, "sub-recs/s")
			b.ReportMetric(groupRate, "group-recs/s")
			b.ReportMetric(groupRate/subRate, "group-x-sub")
		})
	}
}

// benchReaders are the two readers of one run and their totals.
type benchReaders struct {
	sub                *engine.Subscription
	subRead            int64
	buf                []byte
	m                  *Manager
	consumers          int
	groupRead          atomic.Int64
	subTime, groupTime time.Duration
}

// readSubscription reads until the subscription has had target records.
func (r *benchReaders) readSubscription(b *testing.B, target int64) time.Duration {
	began := time.Now()
	maxBytes := benchBatch * segment.RecordSize(0, benchValue)
	for r.subRead < target {
		var err error
		if r.buf, err = r.sub.Next(context.Background(), r.buf[:0], maxBytes); err != nil {
			b.Fatal(err)
		}
		it := segment.NewIter(r.buf)
		for _, ok := it.Next(); ok; _, ok = it.Next() {
			r.subRead++
		}
	}
	return time.Since(began)
}

// drainGroup has the consumers poll and ack until the group has handed
// out target records.
func (r *benchReaders) drainGroup(b *testing.B, target int64) time.Duration {
	began := time.Now()
	var wg sync.WaitGroup
	for i := range r.consumers {
		wg.Go(func() { r.consume(b, fmt.Sprint("c", i), target) })
	}
	wg.Wait()
	return time.Since(began)
}

func (r *benchReaders) consume(b *testing.B, who string, target int64) {
	req := PollRequest{Key: key("bench"), Consumer: who, Max: benchBatch}
	dst := make([]Delivery, 0, benchBatch)
	buf := make([]byte, 0, 64<<10)
	offs := make([]int64, 0, benchBatch)
	for r.groupRead.Load() < target {
		var err error
		dst, buf, err = r.m.PollInto(context.Background(), req, dst[:0], buf[:0])
		if err != nil {
			b.Error(err)
			return
		}
		if len(dst) == 0 {
			return // every record published is handed out
		}
		offs = offs[:0]
		for _, d := range dst {
			offs = append(offs, d.Offset)
		}
		if err := r.m.Ack(key("bench"), who, offs); err != nil {
			b.Error(err)
			return
		}
		r.groupRead.Add(int64(len(offs)))
	}
}

// benchShard opens an engine on a MemFS (the figure is the broker's CPU,
// not a disk's) and publishes b.N records to a one-shard durable stream.
func benchShard(b *testing.B) (*engine.Engine, *engine.Shard) {
	e, err := engine.Open(engine.Options{FS: vfs.NewMem(), Dir: "/data", Fsync: shardlog.None()})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.CreateStream(sid, engine.StreamConfig{Durable: true}); err != nil {
		b.Fatal(err)
	}
	s, _ := e.Stream(sid)
	recs := make([]engine.Record, 1000)
	for i := range recs {
		recs[i].Value = make([]byte, benchValue)
	}
	for left := b.N; left > 0; left -= len(recs) {
		if _, err := s.AppendToShard(0, recs[:min(left, len(recs))], nil); err != nil {
			b.Fatal(err)
		}
	}
	sh, _ := s.Shard(0)
	for sh.End() < int64(b.N) {
		<-sh.Changed()
	}
	return e, sh
}
