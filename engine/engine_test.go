package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

var sid = StreamID{Tenant: "acme", Namespace: "orders", Name: "created"}

func openEngine(t testing.TB, fs vfs.FS) *Engine {
	t.Helper()
	e, err := Open(Options{FS: fs, Dir: "/data", Fsync: shardlog.OnCommit(), SegmentBytes: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// waiter collects one publish's outcome.
type waiter struct {
	done chan struct{}
	runs []AckRun
	err  error
}

func newWaiter() *waiter { return &waiter{done: make(chan struct{})} }

func (w *waiter) Published(runs []AckRun, err error) {
	w.runs, w.err = append([]AckRun(nil), runs...), err
	close(w.done)
}

func (w *waiter) wait(t testing.TB) []AckRun {
	t.Helper()
	select {
	case <-w.done:
	case <-time.After(10 * time.Second):
		t.Fatal("publish never acknowledged")
	}
	if w.err != nil {
		t.Fatalf("publish failed: %v", w.err)
	}
	return w.runs
}

func publish(t testing.TB, s *Stream, recs ...Record) []AckRun {
	t.Helper()
	w := newWaiter()
	if err := s.Publish(recs, w); err != nil {
		t.Fatal(err)
	}
	return w.wait(t)
}

func rec(key string, i int) Record {
	r := Record{Value: fmt.Appendf(nil, "v%d", i)}
	if key != "" {
		r.Key = []byte(key)
	}
	return r
}

// collect reads n records from a subscription.
func collect(t testing.TB, sub *Subscription, n int) []segment.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []segment.Record
	var buf []byte
	for len(out) < n {
		var err error
		buf, err = sub.Next(ctx, buf[:0], 4096)
		if err != nil {
			t.Fatalf("after %d of %d records: %v", len(out), n, err)
		}
		it := segment.NewIter(buf)
		for r, ok := it.Next(); ok; r, ok = it.Next() {
			r.Key, r.Value = bytes.Clone(r.Key), bytes.Clone(r.Value)
			out = append(out, r)
		}
	}
	return out
}

func TestStreamsAreCreatedDescribedListedAndDeleted(t *testing.T) {
	e := openEngine(t, vfs.NewMem())
	defer e.Close()
	info, err := e.CreateStream(sid, StreamConfig{Shards: 3, Durable: true, Kind: KindQueue, Delivery: DeliveryAtLeastOnce})
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.Shards != 3 || info.Config.Kind != KindQueue || info.Config.Consistency != ConsistencyLeader {
		t.Fatalf("created %+v", info.Config)
	}
	if _, err := e.CreateStream(sid, StreamConfig{}); !errors.Is(err, ErrStreamExists) {
		t.Fatalf("second create: %v", err)
	}
	if got := e.Streams("acme", ""); len(got) != 1 || got[0].ID != sid {
		t.Fatalf("list: %+v", got)
	}
	if err := e.DeleteStream(sid); err != nil {
		t.Fatal(err)
	}
	if names, err := e.opts.FS.List("/data/streams/acme/orders"); err != nil || len(names) != 0 {
		t.Fatalf("the stream's directory is still there: %v %v", names, err)
	}
	if _, err := e.Stream(sid); !errors.Is(err, ErrStreamNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	if err := e.DeleteStream(sid); !errors.Is(err, ErrStreamNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

func TestBadNamesAndConfigsAreRefused(t *testing.T) {
	e := openEngine(t, vfs.NewMem())
	defer e.Close()
	for _, id := range []StreamID{{"", "n", "s"}, {"t", "..", "s"}, {"t", "n", "a/b"}, {"t", "n", string(make([]byte, 300))}} {
		if _, err := e.CreateStream(id, StreamConfig{}); !errors.Is(err, ErrInvalidName) {
			t.Fatalf("%q: %v", id, err)
		}
	}
	for _, cfg := range []StreamConfig{{Shards: -1}, {Shards: ShardsMax + 1}, {Consistency: "Most"}, {ReplicationFactor: 3},
		{Kind: "Table"}, {Fsync: FsyncSetting{Kind: "Sometimes"}}} {
		if _, err := e.CreateStream(sid, cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Fatalf("%+v: %v", cfg, err)
		}
	}
	mem, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if _, err := mem.CreateStream(sid, StreamConfig{Durable: true}); !errors.Is(err, ErrNoStorage) {
		t.Fatalf("durable stream without storage: %v", err)
	}
}

func TestADurableStreamSurvivesARestart(t *testing.T) {
	fs := vfs.NewMem()
	e := openEngine(t, fs)
	if _, err := e.CreateStream(sid, StreamConfig{Shards: 2, Durable: true}); err != nil {
		t.Fatal(err)
	}
	s, _ := e.Stream(sid)
	for i := range 50 {
		publish(t, s, rec(fmt.Sprint("k", i), i))
	}
	ends := []int64{s.slot(0).End(), s.slot(1).End()}
	e.Close()
	e2 := openEngine(t, fs)
	defer e2.Close()
	s2, err := e2.Stream(sid)
	if err != nil {
		t.Fatal(err)
	}
	if s2.Info().Config.Shards != 2 || s2.slot(0).End() != ends[0] || s2.slot(1).End() != ends[1] {
		t.Fatalf("after restart: %+v, ends %d %d, want %v", s2.Info(), s2.slot(0).End(), s2.slot(1).End(), ends)
	}
}

func TestAKeyedBatchIsSplitAcrossShardsInOrder(t *testing.T) {
	e := openEngine(t, vfs.NewMem())
	defer e.Close()
	e.CreateStream(sid, StreamConfig{Shards: 4, Durable: true})
	s, _ := e.Stream(sid)
	var batch []Record
	for i := range 40 {
		batch = append(batch, rec(fmt.Sprint("key-", i%7), i))
	}
	runs := publish(t, s, batch...)
	total := 0
	for i, r := range runs {
		total += r.Count
		if i > 0 && runs[i-1].Shard >= r.Shard {
			t.Fatalf("runs not in shard order: %+v", runs)
		}
	}
	if total != 40 {
		t.Fatalf("runs cover %d records: %+v", total, runs)
	}
	for _, r := range runs {
		b, _, err := s.slot(r.Shard).Read(r.First, 1<<20, nil)
		if err != nil {
			t.Fatal(err)
		}
		it := segment.NewIter(b)
		prev := -1
		for rec, ok := it.Next(); ok; rec, ok = it.Next() {
			if s.ShardFor(rec.Key) != r.Shard {
				t.Fatalf("key %q on shard %d", rec.Key, r.Shard)
			}
			var i int
			fmt.Sscanf(string(rec.Value), "v%d", &i)
			if i <= prev {
				t.Fatalf("shard %d: record v%d after v%d", r.Shard, i, prev)
			}
			prev = i
		}
	}
}

// History joins live delivery with no gap and no duplicate, while
// publishers keep going, for durable and in-memory streams.
func TestAResumedSubscriptionIsGaplessUnderConcurrentPublishes(t *testing.T) {
	for _, durable := range []bool{true, false} {
		t.Run(fmt.Sprint("durable=", durable), func(t *testing.T) {
			e := openEngine(t, vfs.NewMem())
			defer e.Close()
			e.CreateStream(sid, StreamConfig{Durable: durable})
			s, _ := e.Stream(sid)
			for i := range 300 {
				publish(t, s, rec("", i))
			}
			const more = 2000
			var wg sync.WaitGroup
			wg.Go(func() {
				for i := range more {
					publish(t, s, rec("", 300+i))
				}
			})
			sh, _ := s.Shard(0)
			sub, err := sh.Subscribe(SubscribeOptions{Start: StartOffset, Offset: 100, QueueRecords: 1 << 20, QueueBytes: 64 << 20})
			if err != nil {
				t.Fatal(err)
			}
			got := collect(t, sub, 300+more-100)
			wg.Wait()
			for i, r := range got {
				if r.Offset != int64(100+i) || string(r.Value) != fmt.Sprint("v", 100+i) {
					t.Fatalf("record %d is offset %d %q", i, r.Offset, r.Value)
				}
			}
			// The reader may have read everything as history (the publisher
			// finished first); asking once more joins live delivery.
			done, cancel := context.WithCancel(context.Background())
			cancel()
			if out, err := sub.Next(done, nil, 1<<20); len(out) != 0 || !errors.Is(err, context.Canceled) {
				t.Fatalf("past the end: %d bytes, %v", len(out), err)
			}
			if st := sub.Stats(); st.Dropped != 0 || !st.Live || st.Delivered != 300+more-100 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

func TestSubscriptionStartsAtLatestEarliestOrAnOffset(t *testing.T) {
	e := openEngine(t, vfs.NewMem())
	defer e.Close()
	e.CreateStream(sid, StreamConfig{Durable: true})
	s, _ := e.Stream(sid)
	sh, _ := s.Shard(0)
	for i := range 10 {
		publish(t, s, rec("", i))
	}
	latest, _ := sh.Subscribe(SubscribeOptions{Start: StartLatest})
	earliest, _ := sh.Subscribe(SubscribeOptions{Start: StartEarliest})
	publish(t, s, rec("", 10))
	if r := collect(t, latest, 1); r[0].Offset != 10 {
		t.Fatalf("latest got offset %d", r[0].Offset)
	}
	if r := collect(t, earliest, 11); r[0].Offset != 0 || r[10].Offset != 10 {
		t.Fatalf("earliest got %d..%d", r[0].Offset, r[len(r)-1].Offset)
	}
	if _, err := sh.Subscribe(SubscribeOptions{Start: StartOffset, Offset: 12}); !errors.Is(err, ErrOffsetPastEnd) {
		t.Fatalf("past the tail: %v", err)
	}
	if _, err := sh.Subscribe(SubscribeOptions{Start: StartOffset, Offset: -1}); !errors.Is(err, ErrOffsetBelowStart) {
		t.Fatalf("below the start: %v", err)
	}
}

// A slow subscriber is dropped from, never waited for: the publisher keeps
// going, and the drops show as gaps in offsets and in the counters.
func TestASlowSubscriberIsDroppedFromAndTheDropIsAnOffsetGap(t *testing.T) {
	for _, policy := range []Overflow{DropNew, DropOld} {
		e := openEngine(t, vfs.NewMem())
		e.CreateStream(sid, StreamConfig{Durable: true})
		s, _ := e.Stream(sid)
		sh, _ := s.Shard(0)
		sub, _ := sh.Subscribe(SubscribeOptions{Start: StartLatest, QueueRecords: 5, Overflow: policy})
		for i := range 20 {
			publish(t, s, rec("", i)) // nobody reads: the queue fills
		}
		got := collect(t, sub, 5)
		st := sub.Stats()
		if st.Dropped != 15 {
			t.Fatalf("%v: dropped %d of 20 with a queue of 5", policy, st.Dropped)
		}
		want := int64(0)
		if policy == DropOld {
			want = 15
		}
		if got[0].Offset != want || got[4].Offset != want+4 {
			t.Fatalf("%v: kept offsets %d..%d", policy, got[0].Offset, got[4].Offset)
		}
		publish(t, s, rec("", 20))
		if r := collect(t, sub, 1); r[0].Offset != 20 {
			t.Fatalf("%v: after the gap got %d", policy, r[0].Offset)
		}
		e.Close()
	}
}

func TestDisconnectEndsTheSubscriptionNamingTheFirstMissedOffset(t *testing.T) {
	e := openEngine(t, vfs.NewMem())
	defer e.Close()
	e.CreateStream(sid, StreamConfig{Durable: true})
	s, _ := e.Stream(sid)
	sh, _ := s.Shard(0)
	sub, _ := sh.Subscribe(SubscribeOptions{Start: StartLatest, QueueRecords: 3, Overflow: Disconnect})
	for i := range 6 {
		publish(t, s, rec("", i))
	}
	collect(t, sub, 3)
	_, err := sub.Next(context.Background(), nil, 100)
	var le *LaggedError
	if !errors.As(err, &le) || le.FirstMissed != 3 {
		t.Fatalf("got %v", err)
	}
}

func TestDeletingAStreamEndsItsSubscriptions(t *testing.T) {
	e := openEngine(t, vfs.NewMem())
	defer e.Close()
	e.CreateStream(sid, StreamConfig{Durable: true})
	s, _ := e.Stream(sid)
	sh, _ := s.Shard(0)
	sub, _ := sh.Subscribe(SubscribeOptions{Start: StartLatest})
	done := make(chan error)
	go func() {
		_, err := sub.Next(context.Background(), nil, 100)
		done <- err
	}()
	e.DeleteStream(sid)
	if err := <-done; !errors.Is(err, ErrStreamDeleted) {
		t.Fatalf("got %v", err)
	}
}

func TestAnInMemoryShardKeepsOnlyItsBound(t *testing.T) {
	e, _ := Open(Options{MemoryShardBytes: memChunkBytes})
	defer e.Close()
	e.CreateStream(sid, StreamConfig{})
	s, _ := e.Stream(sid)
	sh, _ := s.Shard(0)
	big := make([]byte, 10<<10)
	for range 100 {
		publish(t, s, Record{Value: big})
	}
	if sh.Start() == 0 || sh.End() != 100 {
		t.Fatalf("start %d end %d", sh.Start(), sh.End())
	}
	if _, _, err := sh.Read(0, 100, nil); !errors.Is(err, ErrOffsetBelowStart) {
		t.Fatalf("read below start: %v", err)
	}
	sub, _ := sh.Subscribe(SubscribeOptions{Start: StartEarliest})
	r := collect(t, sub, int(100-sh.Start()))
	if r[0].Offset != sh.Start() || r[len(r)-1].Offset != 99 {
		t.Fatalf("earliest read %d..%d", r[0].Offset, r[len(r)-1].Offset)
	}
}

func TestPublishAllocatesNothingInSteadyState(t *testing.T) {
	e, _ := Open(Options{})
	defer e.Close()
	e.CreateStream(sid, StreamConfig{Shards: 4})
	s, _ := e.Stream(sid)
	recs := []Record{{Key: []byte("a"), Value: []byte("x")}, {Key: []byte("b"), Value: []byte("y")}, {Value: []byte("z")}}
	w := &countWaiter{}
	for range 100 {
		s.Publish(recs, w)
	}
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	if a := testing.AllocsPerRun(500, func() { s.Publish(recs, w) }); a > 0 {
		t.Fatalf("%.1f allocations per publish", a)
	}
}

type countWaiter struct{ n int }

func (c *countWaiter) Published([]AckRun, error) { c.n++ }
