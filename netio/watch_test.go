package netio

import (
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"

	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/netio/wire"
)

func TestAKeyWatchOverTheWireSeesItsKeyAndNoOthers(t *testing.T) {
	b := startCacheBroker(t)
	ref := b.createCache("c", cache.Config{Durable: true})
	watcher, writer := b.client(cacheFeaturesAll), b.client(cacheFeaturesAll)
	st := watcher.watch(wire.CacheWatch{Cache: ref, Key: []byte("a")})
	if st.RetainedCount != 0 || st.Resnapshot || st.StartOffset != 0 || st.Shard != 0 || st.Shards != 1 {
		t.Fatalf("WATCH_STARTED %+v", st)
	}
	a0 := writer.mustPut(ref, "a", "1")
	writer.mustPut(ref, "b", "x")
	writer.mustPut(ref, "ab", "x")
	a1 := writer.mustPut(ref, "a", "2")
	del := writtenOf(t, writer.del(wire.CacheDelete{Cache: ref, Key: []byte("a")})).Offset
	evs := watcher.watchEvents(st.WatchID, 3)
	want := []wire.CacheWatchEvent{
		{WatchID: st.WatchID, Offset: a0, Kind: wire.WatchPut, Key: []byte("a"), Value: []byte("1")},
		{WatchID: st.WatchID, Offset: a1, Kind: wire.WatchPut, Key: []byte("a"), Value: []byte("2")},
		{WatchID: st.WatchID, Offset: del, Kind: wire.WatchDelete, Key: []byte("a")},
	}
	for i := range want {
		if fmt.Sprint(evs[i]) != fmt.Sprint(want[i]) {
			t.Fatalf("event %d: %+v, want %+v", i, evs[i], want[i])
		}
	}
	if extra := watcher.ping(); len(extra) != 0 {
		t.Fatalf("%v after the key's events", extra[0].Type)
	}
}

func TestAPrefixWatchOverTheWireReadsTheShardItNames(t *testing.T) {
	b := startCacheBroker(t)
	ref := b.createCache("c", cache.Config{Durable: true, Shards: 4})
	c := b.cache(ref)
	var keys []string
	for i := 0; len(keys) < 3; i++ {
		if k := fmt.Sprintf("p/%d", i); c.ShardFor([]byte(k)) == 2 {
			keys = append(keys, k)
		}
	}
	watcher, writer := b.client(cacheFeaturesAll), b.client(cacheFeaturesAll)
	st := watcher.watch(wire.CacheWatch{Cache: ref, Key: []byte("p/"), Prefix: true, Shard: 2})
	if st.Shard != 2 || st.Shards != 4 {
		t.Fatalf("WATCH_STARTED %+v", st)
	}
	for i := 0; i < 40; i++ {
		writer.mustPut(ref, fmt.Sprintf("p/%d", i), "v") // every shard
		writer.mustPut(ref, fmt.Sprintf("q/%d", i), "v")
	}
	var got []string
	for _, ev := range watcher.watchEvents(st.WatchID, countOnShard(c, "p/", 40, 2)) {
		if c.ShardFor(ev.Key) != 2 || string(ev.Key[:2]) != "p/" {
			t.Fatalf("event of %q", ev.Key)
		}
		got = append(got, string(ev.Key))
	}
	for _, k := range keys {
		if !slices.Contains(got, k) {
			t.Fatalf("no event of %q in %v", k, got)
		}
	}
	if extra := watcher.ping(); len(extra) != 0 {
		t.Fatalf("%v after the shard's events", extra[0].Type)
	}
}

func countOnShard(c *cache.Cache, prefix string, n, shard int) int {
	count := 0
	for i := range n {
		if c.ShardFor(fmt.Appendf(nil, "%s%d", prefix, i)) == shard {
			count++
		}
	}
	return count
}

// TestAResumedWatchOverTheWireIsGaplessUnderConcurrentWrites: writers on
// their own connections write one key (and others) while a watcher reads a
// while, unwatches, and resumes from the offset after its last event, again
// and again. The events it gets are exactly the key's writes, in order.
func TestAResumedWatchOverTheWireIsGaplessUnderConcurrentWrites(t *testing.T) {
	b := startCacheBroker(t)
	ref := b.createCache("c", cache.Config{Durable: true})
	const writers, perWriter = 4, 150
	var mu sync.Mutex
	var written []uint64 // the offsets of the watched key's writes
	var wg sync.WaitGroup
	for w := range writers {
		cl := b.client(cacheFeaturesAll)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				off := cl.mustPut(ref, "k", fmt.Sprintf("%d-%d", w, i))
				cl.mustPut(ref, fmt.Sprintf("other-%d", w), "x")
				mu.Lock()
				written = append(written, off)
				mu.Unlock()
			}
		}()
	}
	watcher := b.client(cacheFeaturesAll)
	var got []uint64
	next := uint64(0)
	for len(got) < writers*perWriter {
		st := watcher.watch(wire.CacheWatch{Cache: ref, Key: []byte("k"), ResumeOffset: wire.U64(next)})
		want := min(len(got)+37, writers*perWriter)
		for _, ev := range watcher.watchEvents(st.WatchID, want-len(got)) {
			got = append(got, ev.Offset)
			next = ev.Offset + 1
		}
		// Events already on their way come before the OK; they count too.
		id := watcher.id()
		watcher.send(wire.AppendControl(nil, id, &wire.CacheUnwatch{WatchID: st.WatchID}))
		for f := watcher.read(); f.Type != wire.TypeOK || f.RequestID != id; f = watcher.read() {
			var ev wire.CacheWatchEvent
			if f.Type != wire.TypeCacheWatchEvent || ev.Decode(f, wire.Limits{}) != nil {
				t.Fatalf("%v before the unwatch's OK: %v", f.Type, decodeErr(f))
			}
			got = append(got, ev.Offset)
			next = ev.Offset + 1
		}
	}
	wg.Wait()
	slices.Sort(written)
	if !slices.Equal(got, written) {
		t.Fatalf("watched %d offsets, wrote %d; first difference at %d", len(got), len(written), firstDiff(got, written))
	}
}

func firstDiff(a, b []uint64) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestARetainedWatchOverTheWireCountsItsSnapshotThenGoesLive(t *testing.T) {
	b := startCacheBroker(t)
	ref := b.createCache("c", cache.Config{Durable: true})
	w := b.client(cacheFeaturesAll)
	w.mustPut(ref, "p/1", "old")
	p1 := w.mustPut(ref, "p/1", "one")
	p2 := w.mustPut(ref, "p/2", "two")
	w.mustPut(ref, "q/1", "x")
	gone := w.mustPut(ref, "p/3", "x")
	writtenOf(t, w.del(wire.CacheDelete{Cache: ref, Key: []byte("p/3")}))

	c := b.client(cacheFeaturesAll)
	st := c.watch(wire.CacheWatch{Cache: ref, Key: []byte("p/"), Prefix: true, Retained: true})
	if st.RetainedCount != 2 || st.Resnapshot || st.StartOffset != gone+2 {
		t.Fatalf("WATCH_STARTED %+v", st)
	}
	snap := c.watchEvents(st.WatchID, 2)
	slices.SortFunc(snap, func(a, b wire.CacheWatchEvent) int { return int(a.Offset) - int(b.Offset) })
	if !snap[0].Snapshot || snap[0].Offset != p1 || string(snap[0].Value) != "one" ||
		!snap[1].Snapshot || snap[1].Offset != p2 || string(snap[1].Value) != "two" {
		t.Fatalf("snapshot %+v", snap)
	}
	live := w.mustPut(ref, "p/4", "four")
	if ev := c.watchEvents(st.WatchID, 1)[0]; ev.Snapshot || ev.Offset != live {
		t.Fatalf("live event %+v", ev)
	}

	empty := c.watch(wire.CacheWatch{Cache: ref, Key: []byte("never"), Retained: true})
	if empty.RetainedCount != 0 {
		t.Fatalf("a retained watch of an empty key: %+v", empty)
	}
	off := w.mustPut(ref, "never", "now")
	if ev := c.watchEvents(empty.WatchID, 1)[0]; ev.Snapshot || ev.Offset != off {
		t.Fatalf("the empty key's first write: %+v", ev)
	}
}

func TestAWatchFromACompactedOffsetResnapshotsOverTheWire(t *testing.T) {
	b := startCacheBroker(t, func(o *cache.Options, _ *Config) { o.SegmentBytes = 4 << 10 })
	ref := b.createCache("c", cache.Config{Durable: true})
	w := b.client(cacheFeaturesAll)
	var last uint64
	for i := range 200 {
		last = w.mustPut(ref, "k", fmt.Sprintf("value-%03d-%s", i, make([]byte, 64)))
	}
	if _, err := b.cache(ref).Compact(); err != nil {
		t.Fatal(err)
	}
	c := b.client(cacheFeaturesAll)
	st := c.watch(wire.CacheWatch{Cache: ref, Key: []byte("k"), ResumeOffset: wire.U64(0)})
	if !st.Resnapshot || st.RetainedCount != 1 || st.StartOffset != last+1 {
		t.Fatalf("WATCH_STARTED %+v, last write at %d", st, last)
	}
	if ev := c.watchEvents(st.WatchID, 1)[0]; !ev.Snapshot || ev.Offset != last {
		t.Fatalf("resnapshot event %+v", ev)
	}
}

// slowWatcher is a broker whose sockets fill fast, with a watcher that
// reads nothing after WATCH_STARTED and a watch queue of 16 events.
func slowWatcher(t *testing.T) (*cacheBroker, wire.CacheRef, *rawClient, *wire.WatchStarted) {
	b := startCacheBroker(t, func(o *cache.Options, cfg *Config) {
		o.WatchQueueEvents = 16
		cfg.OutboundBytesMax = 64 << 10
		cfg.sendBufferBytes = 8 << 10
	})
	ref := b.createCache("c", cache.Config{Durable: true})
	nc, err := net.DialTimeout("tcp", b.s.Addr().String(), waitLimit)
	if err != nil {
		t.Fatal(err)
	}
	nc.(*net.TCPConn).SetReadBuffer(4 << 10)
	t.Cleanup(func() { nc.Close() })
	c := &rawClient{t: t, nc: nc}
	c.hello(cacheFeaturesAll, nil)
	return b, ref, c, c.watch(wire.CacheWatch{Cache: ref, Key: []byte("k")})
}

func TestALaggedWatchEndsNamingTheFirstMissedOffsetAndResumesFromIt(t *testing.T) {
	b, ref, c, st := slowWatcher(t)
	ca := b.cache(ref)
	big := make([]byte, 1024)
	const n = 2000
	for i := range n {
		if _, err := ca.Put([]byte("k"), fmt.Appendf(nil, "%d-%s", i, big), cache.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var got []uint64
	var ended *wire.WatchEnded
	for ended == nil {
		f := c.read()
		switch f.Type {
		case wire.TypeWatchEnded:
			ended = decodeControl[wire.WatchEnded](t, f)
		case wire.TypeCacheWatchEvent:
			var ev wire.CacheWatchEvent
			if err := ev.Decode(f, wire.Limits{}); err != nil {
				t.Fatal(err)
			}
			got = append(got, ev.Offset)
		default:
			t.Fatalf("%v: %v", f.Type, decodeErr(f))
		}
	}
	if ended.WatchID != st.WatchID || ended.Code != wire.CodeCacheWatchLagged || ended.FirstMissedOffset == nil {
		t.Fatalf("WATCH_ENDED %+v", ended)
	}
	if *ended.FirstMissedOffset != uint64(len(got)) || len(got) == n {
		t.Fatalf("first missed %d after %d events of %d", *ended.FirstMissedOffset, len(got), n)
	}
	for i, off := range got {
		if off != uint64(i) {
			t.Fatalf("event %d at offset %d", i, off)
		}
	}
	// Resume on a connection with ordinary buffers: the slow one's tiny
	// windows make TCP itself crawl.
	c = b.client(cacheFeaturesAll)
	resumed := c.watch(wire.CacheWatch{Cache: ref, Key: []byte("k"), ResumeOffset: ended.FirstMissedOffset})
	for i, ev := range c.watchEvents(resumed.WatchID, n-len(got)) {
		if ev.Offset != uint64(len(got)+i) {
			t.Fatalf("resumed event %d at offset %d", i, ev.Offset)
		}
	}
}

func TestAnUnwatchIsAnsweredAfterTheWatchsLastEvent(t *testing.T) {
	b := startCacheBroker(t)
	ref := b.createCache("c", cache.Config{Durable: true})
	c, w := b.client(cacheFeaturesAll), b.client(cacheFeaturesAll)
	st := c.watch(wire.CacheWatch{Cache: ref, Key: []byte("k")})
	for range 50 {
		w.mustPut(ref, "k", "v")
	}
	c.send(wire.AppendControl(nil, 77, &wire.CacheUnwatch{WatchID: st.WatchID}))
	events := 0
	for f := c.read(); f.Type != wire.TypeOK; f = c.read() {
		if f.Type != wire.TypeCacheWatchEvent {
			t.Fatalf("%v before the OK", f.Type)
		}
		events++
	}
	w.mustPut(ref, "k", "after")
	if extra := c.ping(); len(extra) != 0 || events > 50 {
		t.Fatalf("%d frames after the OK, %d events before", len(extra), events)
	}
	if got := b.s.connections(); len(got) == 0 {
		t.Fatal("no connections")
	}
	waitUntil(t, "the watch to be forgotten", func() bool {
		for _, conn := range b.s.connections() {
			if conn.watchCount() != 0 {
				return false
			}
		}
		return true
	})
}

func TestDroppingACacheEndsItsWatchesWithNotFound(t *testing.T) {
	b := startCacheBroker(t)
	ref := b.createCache("c", cache.Config{Durable: true})
	c := b.client(cacheFeaturesAll)
	st := c.watch(wire.CacheWatch{Cache: ref, Key: []byte("k")})
	if f := b.client(cacheFeaturesAll).control(&wire.CacheDrop{Cache: ref}); f.Type != wire.TypeOK {
		t.Fatalf("%v", decodeErr(f))
	}
	m := decodeControl[wire.WatchEnded](t, c.read())
	if m.WatchID != st.WatchID || m.Code != wire.CodeNotFound {
		t.Fatalf("%+v", m)
	}
}

func TestStopEndsWatchesWithShuttingDown(t *testing.T) {
	b := startCacheBroker(t)
	ref := b.createCache("c", cache.Config{Durable: true})
	c := b.client(cacheFeaturesAll)
	st := c.watch(wire.CacheWatch{Cache: ref, Key: []byte("k")})
	done := make(chan error, 1)
	go func() { done <- b.s.Stop(t.Context()) }()
	m := decodeControl[wire.WatchEnded](t, c.read())
	if m.WatchID != st.WatchID || m.Code != wire.CodeShuttingDown {
		t.Fatalf("%+v", m)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestAConnectionClosedUnderAWatchReleasesIt(t *testing.T) {
	b := startCacheBroker(t)
	ref := b.createCache("c", cache.Config{Durable: true})
	c := b.client(cacheFeaturesAll)
	c.watch(wire.CacheWatch{Cache: ref, Key: []byte("k")})
	c.nc.Close()
	waitUntil(t, "the watch and its deliverer to end", func() bool {
		return b.cache(ref).Stats()[0].Watches == 0 && b.s.work.n.Load() == 0
	})
}
