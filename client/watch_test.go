package client

import (
	"errors"
	"fmt"
	"testing"

	"github.com/felixbroker/felix/netio/wire"
)

// watchScript answers the first CACHE_WATCH with a resnapshot of two
// values, a live put and a lag; the second (which must resume at the first
// missed offset) with a live delete, then ends it as if the cache were
// dropped.
func watchScript(t *testing.T, resumes chan<- *uint64) func(fc *fakeConn, f wire.Frame) {
	n := 0
	return func(fc *fakeConn, f wire.Frame) {
		if f.Type != wire.TypeCacheWatch {
			fc.fail(f.RequestID, wire.CodeInvalidArgument, "unexpected", wire.Details{})
			return
		}
		var m wire.CacheWatch
		if err := wire.DecodeControl(f, wire.Limits{}, &m); err != nil {
			t.Error(err)
			return
		}
		resumes <- m.ResumeOffset
		ev := func(off uint64, kind wire.WatchEventKind, snap bool, value string) func([]byte) []byte {
			return func(dst []byte) []byte {
				e := wire.CacheWatchEvent{WatchID: uint64(n), Offset: off, Kind: kind, Snapshot: snap, Key: []byte("k")}
				if value != "" {
					e.Value = []byte(value)
				}
				return wire.AppendCacheWatchEvent(dst, 0, e)
			}
		}
		n++
		frames := []func([]byte) []byte{}
		if n == 1 {
			frames = append(frames,
				func(dst []byte) []byte {
					return wire.AppendControl(dst, f.RequestID, &wire.WatchStarted{WatchID: 1, RetainedCount: 2, Resnapshot: true,
						StartOffset: 10, Shard: 1, Shards: 2})
				},
				ev(3, wire.WatchPut, true, "a"), ev(5, wire.WatchPut, true, "b"), ev(10, wire.WatchPut, false, "c"),
				func(dst []byte) []byte {
					return wire.AppendControl(dst, 0, &wire.WatchEnded{WatchID: 1, Code: wire.CodeCacheWatchLagged, FirstMissedOffset: wire.U64(11)})
				})
		} else {
			frames = append(frames,
				func(dst []byte) []byte {
					return wire.AppendControl(dst, f.RequestID, &wire.WatchStarted{WatchID: 2, StartOffset: 11, Shard: 1, Shards: 2})
				},
				ev(12, wire.WatchDelete, false, ""),
				func(dst []byte) []byte {
					return wire.AppendControl(dst, 0, &wire.WatchEnded{WatchID: 2, Code: wire.CodeNotFound, Message: "dropped"})
				})
		}
		fc.sendWith(func(dst []byte) []byte {
			for _, enc := range frames {
				dst = enc(dst)
			}
			return dst
		})
	}
}

func TestAWatchTurnsFramesIntoTypedEventsAndResumesAfterLag(t *testing.T) {
	resumes := make(chan *uint64, 4)
	b := newFakeBroker(t, watchScript(t, resumes))
	c := dialFake(t, b)
	ctx := testCtx(t)
	w, err := c.Cache(CacheName{Tenant: "acme", Namespace: "prod", Name: "c"}).Watch(ctx, []byte("k"), WithResumeAt(2))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if r := <-resumes; r == nil || *r != 2 {
		t.Fatalf("first watch resumed at %v", r)
	}
	want := []string{"reset 0 1", "snapshot 3 1 a", "snapshot 5 1 b", "synced 2", "put 10 1 c", "lagged 11", "delete 12 1"}
	for i, w0 := range want {
		ev, err := w.Next(ctx)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if got := describe(ev); got != w0 {
			t.Fatalf("event %d: %q, want %q", i, got, w0)
		}
		if ev.Kind == WatchLagged {
			if r := <-resumes; r == nil || *r != 11 {
				t.Fatalf("resumed at %v after the lag", r)
			}
		}
	}
	_, err = w.Next(ctx)
	var ended *WatchEndedError
	if !errors.As(err, &ended) || !errors.Is(err, ErrNotFound) || ended.ResumeOffset != 13 {
		t.Fatalf("the end: %v", err)
	}
	if w.Shard() != 1 || w.Shards() != 2 || w.ResumeOffset() != 13 {
		t.Fatalf("shard %d of %d, resume at %d", w.Shard(), w.Shards(), w.ResumeOffset())
	}
}

func describe(ev WatchEvent) string {
	switch ev.Kind {
	case WatchSynced:
		return fmt.Sprintf("synced %d", ev.Count)
	case WatchLagged:
		return fmt.Sprintf("lagged %d", ev.FirstMissed)
	case WatchReset:
		return fmt.Sprintf("reset %d %d", ev.Offset, ev.Shard)
	case WatchDelete:
		return fmt.Sprintf("delete %d %d", ev.Offset, ev.Shard)
	}
	return fmt.Sprintf("%v %d %d %s", ev.Kind, ev.Offset, ev.Shard, ev.Value)
}

func TestAWatchWithoutResumeOnLagEndsLagged(t *testing.T) {
	resumes := make(chan *uint64, 4)
	b := newFakeBroker(t, watchScript(t, resumes))
	w, err := dialFake(t, b).Cache(CacheName{Tenant: "acme", Namespace: "prod", Name: "c"}).Watch(testCtx(t), []byte("k"), WithWatchResumeOnLag(false))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var last error
	for _, err := range w.Events(testCtx(t)) {
		last = err
	}
	var ended *WatchEndedError
	if !errors.As(last, &ended) || !errors.Is(last, ErrCacheWatchLagged) || ended.ResumeOffset != 11 {
		t.Fatalf("%v", last)
	}
}

func TestWatchOptionsAreCheckedBeforeAnythingIsSent(t *testing.T) {
	b := newFakeBroker(t, nil)
	ca := dialFake(t, b).Cache(CacheName{Tenant: "acme", Namespace: "prod", Name: "c"})
	ctx := testCtx(t)
	for name, err := range map[string]error{
		"retained and resumed": second(ca.WatchRetained(ctx, []byte("k"), WithResumeAt(3))),
		"negative resume":      second(ca.Watch(ctx, []byte("k"), WithResumeAt(-1))),
		"negative shard":       second(ca.Watch(ctx, []byte("k"), WithPrefixOnShard(-1))),
	} {
		var se *ServerError
		if !errors.As(err, &se) || !se.Local || !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if n := b.connCount(); n != 1 {
		t.Fatalf("%d connections: a refused watch dialed", n)
	}
}
