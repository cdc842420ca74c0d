package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/netio"
)

// nextEvent reads one event, failing the test on an error.
func nextEvent(t testing.TB, w *client.Watch) client.WatchEvent {
	t.Helper()
	ev, err := w.Next(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestAWatchThroughTheClientSeesItsKeyLiveAndEndsWhenTheCacheIsDropped(t *testing.T) {
	b := startCacheBroker(t, nil)
	c := b.client()
	ctx := testCtx(t)
	ca := newCache(t, c, "w", client.CacheConfig{})
	w, err := ca.Watch(ctx, []byte("k"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	p, _ := ca.Put(ctx, []byte("k"), []byte("1"))
	ca.Put(ctx, []byte("other"), []byte("x"))
	d, _ := ca.Delete(ctx, []byte("k"))
	if ev := nextEvent(t, w); ev.Kind != client.WatchPut || ev.Offset != p.Offset || string(ev.Value) != "1" {
		t.Fatalf("%+v", ev)
	}
	if ev := nextEvent(t, w); ev.Kind != client.WatchDelete || ev.Offset != d.Offset || ev.Value != nil {
		t.Fatalf("%+v", ev)
	}
	if w.ResumeOffset() != d.Offset+1 {
		t.Fatalf("resume offset %d after the delete at %d", w.ResumeOffset(), d.Offset)
	}
	if err := ca.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = w.Next(ctx)
	var ended *client.WatchEndedError
	if !errors.As(err, &ended) || !errors.Is(err, client.ErrNotFound) || ended.ResumeOffset != d.Offset+1 {
		t.Fatalf("after the drop: %v", err)
	}
}

func TestARetainedWatchThroughTheClientSyncsThenGoesLive(t *testing.T) {
	b := startCacheBroker(t, nil)
	ctx := testCtx(t)
	ca := newCache(t, b.client(), "r", client.CacheConfig{})
	ca.Put(ctx, []byte("cfg/a"), []byte("1"))
	ca.Put(ctx, []byte("cfg/b"), []byte("2"))
	w, err := ca.WatchRetained(ctx, []byte("cfg/"), client.WithPrefixOnShard(0))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	state := map[string]string{}
	for ev, err := range w.Events(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == client.WatchSynced {
			if ev.Count != 2 {
				t.Fatalf("synced after %d values", ev.Count)
			}
			break
		}
		if ev.Kind != client.WatchSnapshot {
			t.Fatalf("%v before synced", ev.Kind)
		}
		state[string(ev.Key)] = string(ev.Value)
	}
	if fmt.Sprint(state) != "map[cfg/a:1 cfg/b:2]" {
		t.Fatalf("state %v", state)
	}
	ca.Put(ctx, []byte("cfg/c"), []byte("3"))
	if ev := nextEvent(t, w); ev.Kind != client.WatchPut || string(ev.Key) != "cfg/c" {
		t.Fatalf("%+v", ev)
	}
	empty, err := ca.WatchRetained(ctx, []byte("nothing"))
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Close()
	if ev := nextEvent(t, empty); ev.Kind != client.WatchSynced || ev.Count != 0 {
		t.Fatalf("a retained watch of an empty key: %+v", ev)
	}
}

func TestAWatchResumedFromACompactedOffsetResetsThroughTheClient(t *testing.T) {
	b := startCacheBroker(t, func(o *cache.Options, _ *netio.Config) { o.SegmentBytes = 4 << 10 })
	ctx := testCtx(t)
	ca := newCache(t, b.client(), "rs", client.CacheConfig{})
	var last client.Written
	for i := range 200 {
		var err error
		if last, err = ca.Put(ctx, []byte("k"), fmt.Appendf(nil, "value-%03d-%0100d", i, 0)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := b.store.Cache(cache.ID{Tenant: "acme", Namespace: "prod", Name: "rs"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compact(); err != nil {
		t.Fatal(err)
	}
	w, err := ca.Watch(ctx, []byte("k"), client.WithResumeAt(0))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	kinds := []client.WatchEventKind{client.WatchReset, client.WatchSnapshot, client.WatchSynced}
	for i, want := range kinds {
		ev := nextEvent(t, w)
		if ev.Kind != want || (want == client.WatchSnapshot && ev.Offset != last.Offset) || (want == client.WatchSynced && ev.Count != 1) {
			t.Fatalf("event %d: %+v, want %v", i, ev, want)
		}
	}
	if w.ResumeOffset() != last.Offset+1 {
		t.Fatalf("resume offset %d", w.ResumeOffset())
	}
}

// TestALaggedWatchThroughTheClientResumesWithNoGap: a watcher that stops
// reading while its key is written thousands of times is ended by the
// broker (its queue holds 16 events); the client reports WatchLagged and
// resumes from the first offset it missed, so what the application reads
// is every write, in order, exactly once.
func TestALaggedWatchThroughTheClientResumesWithNoGap(t *testing.T) {
	b := startCacheBroker(t, func(o *cache.Options, cfg *netio.Config) {
		o.WatchQueueEvents = 16
		cfg.OutboundBytesMax = 16 << 10
	})
	ctx := testCtx(t)
	ca := newCache(t, b.client(), "lag", client.CacheConfig{})
	w, err := ca.Watch(ctx, []byte("k"), client.WithWatchBuffer(4))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	c, err := b.store.Cache(cache.ID{Tenant: "acme", Namespace: "prod", Name: "lag"})
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 4<<10)
	const n = 3000 // 12 MiB: more than the sockets between them hold
	for i := range n {
		if _, err := c.Put([]byte("k"), fmt.Appendf(big[:0:0], "%d-%s", i, big), cache.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var got []int64
	lags := 0
	for len(got) < n {
		ev := nextEvent(t, w)
		switch ev.Kind {
		case client.WatchLagged:
			lags++
			if ev.FirstMissed != int64(len(got)) {
				t.Fatalf("lagged at %d after %d events", ev.FirstMissed, len(got))
			}
		case client.WatchPut:
			got = append(got, ev.Offset)
		default:
			t.Fatalf("%+v", ev)
		}
	}
	if lags == 0 {
		t.Fatal("the watch never lagged: the test proves nothing")
	}
	for i, off := range got {
		if off != int64(i) {
			t.Fatalf("event %d at offset %d", i, off)
		}
	}
}

// TestAResumedWatchThroughTheClientIsGaplessUnderConcurrentWrites:
// writers write one key (and others) while a reader closes its watch
// every few events and opens another at the ResumeOffset of the last.
func TestAResumedWatchThroughTheClientIsGaplessUnderConcurrentWrites(t *testing.T) {
	b := startCacheBroker(t, nil)
	ctx := testCtx(t)
	ca := newCache(t, b.client(), "gapless", client.CacheConfig{Shards: 2})
	const writers, each = 4, 100
	var mu sync.Mutex
	var written []int64
	var wg sync.WaitGroup
	for i := range writers {
		wc := b.client().Cache(client.CacheName{Tenant: "acme", Namespace: "prod", Name: "gapless"})
		wg.Go(func() {
			for j := range each {
				w, err := wc.Put(ctx, []byte("k"), fmt.Appendf(nil, "%d-%d", i, j))
				if err != nil {
					t.Error(err)
					return
				}
				wc.Put(ctx, fmt.Appendf(nil, "other-%d", j), []byte("x"))
				mu.Lock()
				written = append(written, w.Offset)
				mu.Unlock()
			}
		})
	}
	var got []int64
	resume := int64(0)
	for len(got) < writers*each {
		w, err := ca.Watch(ctx, []byte("k"), client.WithResumeAt(resume))
		if err != nil {
			t.Fatal(err)
		}
		for range min(23, writers*each-len(got)) {
			ev := nextEvent(t, w)
			if ev.Kind != client.WatchPut {
				t.Fatalf("%+v", ev)
			}
			got = append(got, ev.Offset)
		}
		resume = w.ResumeOffset()
		w.Close()
	}
	wg.Wait()
	slices.Sort(written)
	if !slices.Equal(got, written) {
		t.Fatalf("watched %v\nwrote   %v", got, written)
	}
}

func TestClosingTheClientEndsItsWatches(t *testing.T) {
	b := startCacheBroker(t, nil)
	c := b.client()
	ca := newCache(t, c, "close", client.CacheConfig{})
	w, err := ca.Watch(testCtx(t), []byte("k"))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if _, err := w.Next(context.Background()); !errors.Is(err, client.ErrClosed) {
		t.Fatalf("%v", err)
	}
}
