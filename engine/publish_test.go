package engine

import (
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment/vfs"
)

// batchWaiter is a BatchPublishWaiter: it records how it was told.
type batchWaiter struct {
	told    int
	inBatch bool
	runs    []AckRun
	err     error
	flushed *flushMark
}

func (w *batchWaiter) Published(runs []AckRun, err error) {
	w.told++
	w.runs, w.err = append([]AckRun(nil), runs...), err
}

func (w *batchWaiter) PublishedIn(b *AckBatch, runs []AckRun) {
	w.told++
	w.inBatch = true
	w.runs = append([]AckRun(nil), runs...)
	if w.flushed != nil {
		b.Defer(w.flushed)
	}
}

// flushMark is a shardlog.Flusher that counts its runs.
type flushMark struct{ runs, of int }

func (f *flushMark) FlushAcks(info FlushInfo) { f.runs++; f.of = info.Flushers }

// A publish to a durable stream is told with the batch of the flush that
// acknowledged it, once, with every shard's run (a keyed batch that spans
// shards completes with its last part); what it defers runs after. A
// stream kept in memory tells it through Published.
func TestADurablePublishIsToldWithTheBatchOfItsFlush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := openEngine(t, vfs.NewMem())
		defer e.Close()
		e.CreateStream(sid, StreamConfig{Shards: 4, Durable: true})
		s, _ := e.Stream(sid)
		var batch []Record
		for i := range 12 {
			batch = append(batch, rec(fmt.Sprint("key-", i), i))
		}
		w := &batchWaiter{flushed: &flushMark{}}
		if err := s.Publish(batch, w); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		total := 0
		for _, r := range w.runs {
			total += r.Count
		}
		if w.told != 1 || !w.inBatch || w.err != nil || len(w.runs) < 2 || total != 12 {
			t.Fatalf("told %d times, in a batch %v, err %v, runs %+v", w.told, w.inBatch, w.err, w.runs)
		}
		if w.flushed.runs != 1 || w.flushed.of != 1 {
			t.Fatalf("deferred work ran %d times (of %d)", w.flushed.runs, w.flushed.of)
		}

		memID := StreamID{Tenant: "acme", Namespace: "orders", Name: "kept-in-memory"}
		e.CreateStream(memID, StreamConfig{Shards: 1})
		m, _ := e.Stream(memID)
		mw := &batchWaiter{}
		if err := m.Publish([]Record{rec("", 1)}, mw); err != nil {
			t.Fatal(err)
		}
		if mw.told != 1 || mw.inBatch {
			t.Fatalf("in-memory publish told %d times, in a batch %v", mw.told, mw.inBatch)
		}
	})
}

// publishDeferred makes n one-record publishes to s with PublishDeferWake
// (keys over six values, so several shards) and returns their waiters.
func publishDeferred(t *testing.T, s *Stream, wakes *WakeList, n int) []*batchWaiter {
	t.Helper()
	waiters := make([]*batchWaiter, n)
	for i := range waiters {
		waiters[i] = &batchWaiter{}
		if err := s.PublishDeferWake([]Record{rec(fmt.Sprint("k", i%6), i)}, waiters[i], wakes); err != nil {
			t.Fatal(err)
		}
	}
	return waiters
}

// PublishDeferWake leaves the shards' committers asleep until the
// WakeList is woken, which wakes each once however many publishes touched
// it; the records and acknowledgements then follow as with Publish.
func TestPublishDeferWakeWaitsForTheWakeList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := openEngine(t, vfs.NewMem())
		defer e.Close()
		e.CreateStream(sid, StreamConfig{Shards: 4, Durable: true})
		s, _ := e.Stream(sid)
		synctest.Wait() // every committer waits for records
		var wakes WakeList
		waiters := publishDeferred(t, s, &wakes, 20)
		synctest.Wait()
		for sh := range s.openShards() {
			if sh.End() != 0 {
				t.Fatalf("shard %d at %d before the wake", sh.index, sh.End())
			}
		}
		if len(wakes.logs) == 0 || len(wakes.logs) > s.Shards() {
			t.Fatalf("%d logs to wake for %d shards", len(wakes.logs), s.Shards())
		}
		wakes.Wake()
		synctest.Wait()
		if len(wakes.logs) != 0 {
			t.Fatalf("%d logs left to wake after Wake", len(wakes.logs))
		}
		for i, w := range waiters {
			if w.told != 1 || w.err != nil || len(w.runs) != 1 || w.runs[0].Count != 1 {
				t.Fatalf("publish %d: told %d times, err %v, runs %+v", i, w.told, w.err, w.runs)
			}
		}
	})
}

// Under Periodic, WakeList.FlushHere has each idle committer's work done on
// the caller's goroutine: every publish is acknowledged, with its flush's
// batch, before it returns, and nothing is left to wake. Where it may not
// (more queued than maxBytes), the logs stay in the list for Wake.
func TestWakeListFlushHereAcknowledgesOnTheCaller(t *testing.T) {
	for _, c := range []struct {
		name     string
		maxBytes int
		here     bool
	}{{"here", 1 << 20, true}, {"over_max_bytes", 16, false}} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e, err := Open(Options{FS: vfs.NewMem(), Dir: "/data", Fsync: shardlog.Periodic(0), SegmentBytes: 16 << 10})
				if err != nil {
					t.Fatal(err)
				}
				defer e.Close()
				e.CreateStream(sid, StreamConfig{Shards: 4, Durable: true})
				s, _ := e.Stream(sid)
				synctest.Wait() // every committer waits for records
				var wakes WakeList
				waiters := publishDeferred(t, s, &wakes, 20)
				logs := len(wakes.logs)
				wakes.FlushHere(c.maxBytes)
				if !c.here {
					if len(wakes.logs) != logs {
						t.Fatalf("%d of %d logs left to wake", len(wakes.logs), logs)
					}
					wakes.Wake()
					synctest.Wait()
				}
				if len(wakes.logs) != 0 {
					t.Fatalf("%d logs left to wake", len(wakes.logs))
				}
				for i, w := range waiters {
					if w.told != 1 || !w.inBatch || len(w.runs) != 1 || w.runs[0].Count != 1 {
						t.Fatalf("publish %d: told %d times (in a batch: %v), runs %+v", i, w.told, w.inBatch, w.runs)
					}
				}
			})
		})
	}
}
