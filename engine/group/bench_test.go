package group

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// Benchmark shape: records of benchValue bytes, taken benchBatch at a time.
const (
	benchValue = 100
	benchBatch = 100
)

// subscriptionRecsPerSec is this run's baseline: a plain subscription
// reading the same records.
var subscriptionRecsPerSec float64

// BenchmarkGroupDrain measures consumers draining b.N published records
// through a group (poll 100, ack them), against a plain engine.Subscription
// reading the same records from the earliest, in the same run. One op is
// one record. Group rows report x-subscription: their records/s over the
// subscription's (the goal for one consumer: at least 0.5).
func BenchmarkGroupDrain(b *testing.B) {
	b.Run("subscription", func(b *testing.B) {
		e, sh := benchShard(b)
		defer e.Close()
		sub, err := sh.Subscribe(engine.SubscribeOptions{Start: engine.StartEarliest})
		if err != nil {
			b.Fatal(err)
		}
		defer sub.Close()
		buf := make([]byte, 0, 64<<10)
		maxBytes := benchBatch * segment.RecordSize(0, benchValue)
		startTimer(b)
		for n := 0; n < b.N; {
			if buf, err = sub.Next(context.Background(), buf[:0], maxBytes); err != nil {
				b.Fatal(err)
			}
			it := segment.NewIter(buf)
			for _, ok := it.Next(); ok; _, ok = it.Next() {
				n++
			}
		}
		subscriptionRecsPerSec = reportRate(b, 0)
	})
	for _, consumers := range []int{1, 8} {
		b.Run(fmt.Sprint("group/consumers=", consumers), func(b *testing.B) {
			e, _ := benchShard(b)
			defer e.Close()
			m := New(e, Options{})
			defer m.Close()
			if err := m.Create(key("bench"), engine.StartEarliest, 0); err != nil {
				b.Fatal(err)
			}
			var left atomic.Int64
			left.Store(int64(b.N))
			var wg sync.WaitGroup
			startTimer(b)
			for i := range consumers {
				wg.Go(func() { drain(b, m, fmt.Sprint("c", i), &left) })
			}
			wg.Wait()
			reportRate(b, subscriptionRecsPerSec)
		})
	}
}

// drain polls and acks until the records left to take run out.
func drain(b *testing.B, m *Manager, who string, left *atomic.Int64) {
	req := PollRequest{Key: key("bench"), Consumer: who, Max: benchBatch}
	dst := make([]Delivery, 0, benchBatch)
	buf := make([]byte, 0, 64<<10)
	offs := make([]int64, 0, benchBatch)
	for left.Load() > 0 {
		var err error
		dst, buf, err = m.PollInto(context.Background(), req, dst[:0], buf[:0])
		if err != nil {
			b.Error(err)
			return
		}
		offs = offs[:0]
		for _, d := range dst {
			offs = append(offs, d.Offset)
		}
		if len(offs) == 0 {
			continue
		}
		if err := m.Ack(key("bench"), who, offs); err != nil {
			b.Error(err)
			return
		}
		left.Add(-int64(len(offs)))
	}
}

// benchShard opens an engine on a MemFS and publishes b.N records to a
// one-shard durable stream.
func benchShard(b *testing.B) (*engine.Engine, *engine.Shard) {
	b.StopTimer()
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

func startTimer(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(benchValue)
	b.ResetTimer()
	b.StartTimer()
}

func reportRate(b *testing.B, baseline float64) float64 {
	b.StopTimer()
	rate := float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(rate, "recs/s")
	if baseline > 0 {
		b.ReportMetric(rate/baseline, "x-subscription")
	}
	return rate
}
