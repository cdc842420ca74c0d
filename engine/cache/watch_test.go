package cache

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/felixbroker/felix/segment/vfs"
)

// The contract's test: a key watch delivers each write of its key, in
// order with its offset (a put with its value, a delete with none), and
// nothing of any other key, even one it is a prefix of.
func TestAKeyWatchSeesItsKeyAndNoOthers(t *testing.T) {
	_, c := newCache(t, vfs.NewMem(), nil, Config{Durable: true, Shards: 4})
	defer c.store.Close()
	w, err := c.Watch(WatchOptions{Key: []byte("a")})
	if err != nil {
		t.Fatal(err)
	}
	if st := w.Started(); st.Snapshot != 0 || st.Resnapshot || st.Shard != c.ShardFor([]byte("a")) {
		t.Fatalf("started %+v", st)
	}
	var want []string
	for i := range 10 {
		for _, k := range []string{"a", "ab", "b", "A"} {
			res := put(t, c, k, fmt.Sprint(i), PutOptions{})
			if k == "a" {
				want = append(want, describe(Event{Kind: EventPut, Key: []byte(k), Value: []byte(fmt.Sprint(i)), Offset: res.Offset}))
			}
		}
	}
	d, err := c.Delete([]byte("a"), Condition{})
	if err != nil {
		t.Fatal(err)
	}
	c.Delete([]byte("ab"), Condition{})
	want = append(want, describe(Event{Kind: EventDelete, Key: []byte("a"), Offset: d.Offset}))
	last := put(t, c, "a", "end", PutOptions{})
	want = append(want, describe(Event{Kind: EventPut, Key: []byte("a"), Value: []byte("end"), Offset: last.Offset}))
	for i, wantEv := range want {
		ev := mustNext(t, w)
		if got := describe(ev); got != wantEv {
			t.Fatalf("event %d: %s, want %s", i, got, wantEv)
		}
		if ev.Kind == EventDelete && ev.Value != nil {
			t.Fatalf("a delete event carries a value: %s", describe(ev))
		}
	}
	w.Close()
	if _, err := next(t, w); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

// logOf reads every write of the shard from offset from, as the watch
// should deliver them for a prefix watch on "".
func logOf(t *testing.T, c *Cache, shard int, from int64) []string {
	t.Helper()
	w, err := c.Watch(WatchOptions{Prefix: true, Shard: shard, Resume: true, Offset: from})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var out []string
	for end := c.Stats()[shard].End; ; {
		ev := mustNext(t, w)
		out = append(out, describe(ev))
		if ev.Offset == end-1 {
			return out
		}
	}
}

// The contract's test: a watch resumed at an offset while writers keep
// writing delivers every write from that offset on, replayed from the log
// and then live, with no gap and no duplicate at the join.
func TestAResumedWatchIsGaplessUnderConcurrentWrites(t *testing.T) {
	_, c := newCache(t, vfs.NewMem(), nil, Config{Durable: true})
	defer c.store.Close()
	for i := range 150 {
		put(t, c, fmt.Sprintf("k%d", i%7), fmt.Sprint(i), PutOptions{})
	}
	const from = 40
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 150 {
				k := fmt.Sprintf("k%d", (i+w)%7)
				if i%9 == 0 {
					c.Delete([]byte(k), Condition{})
					continue
				}
				if _, err := c.Put([]byte(k), fmt.Appendf(nil, "w%d-%d", w, i), PutOptions{}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	go func() { // the last write, once every writer is done
		wg.Wait()
		c.Put([]byte("zz-last"), nil, PutOptions{})
	}()
	w, err := c.Watch(WatchOptions{Prefix: true, Resume: true, Offset: from, QueueEvents: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if st := w.Started(); st.StartOffset != from || st.Resnapshot {
		t.Fatalf("started %+v", st)
	}
	var got []string
	for want := int64(from); ; want++ {
		ev := mustNext(t, w)
		if ev.Offset != want {
			t.Fatalf("event at offset %d, want %d: a gap or a duplicate", ev.Offset, want)
		}
		got = append(got, describe(ev))
		if string(ev.Key) == "zz-last" {
			break
		}
	}
	if replay := logOf(t, c, 0, from); fmt.Sprint(replay) != fmt.Sprint(got) {
		t.Fatalf("the live watch and the log disagree:\n%v\n%v", got, replay)
	}
}

// A resume from the end goes live at once; past it is an error.
func TestAResumePastTheEndIsRefused(t *testing.T) {
	_, c := newCache(t, nil, nil, Config{})
	defer c.store.Close()
	put(t, c, "k", "v", PutOptions{})
	var oe *OffsetError
	if _, err := c.Watch(WatchOptions{Key: []byte("k"), Resume: true, Offset: 2}); !errors.As(err, &oe) || oe.End != 1 {
		t.Fatalf("resume past the end: %v", err)
	}
	w, err := c.Watch(WatchOptions{Key: []byte("k"), Resume: true, Offset: 1})
	if err != nil {
		t.Fatal(err)
	}
	res := put(t, c, "k", "live", PutOptions{})
	if ev := mustNext(t, w); ev.Offset != res.Offset || string(ev.Value) != "live" {
		t.Fatalf("event %s", describe(ev))
	}
}

// The contract's test: a watch resuming from an offset compaction has
// collapsed gets a marked snapshot of the current values (resnapshot),
// each at the offset that wrote it, and then live writes; never a silent
// gap.
func TestAWatchFromACompactedOffsetResnapshots(t *testing.T) {
	_, c := newCache(t, vfs.NewMem(), nil, Config{Durable: true})
	defer c.store.Close()
	current := map[string]Written{}
	for i := range 200 {
		k := fmt.Sprintf("k%d", i%8)
		current[k] = put(t, c, k, fmt.Sprintf("%d-%040d", i, i), PutOptions{})
	}
	c.Delete([]byte("k7"), Condition{})
	delete(current, "k7")
	if _, err := c.Compact(); err != nil {
		t.Fatal(err)
	}
	if c.Stats()[0].CompactedThrough == 0 {
		t.Fatal("compaction removed nothing")
	}
	w, err := c.Watch(WatchOptions{Prefix: true, Key: []byte("k"), Resume: true, Offset: 3})
	if err != nil {
		t.Fatal(err)
	}
	st := w.Started()
	if !st.Resnapshot || st.Snapshot != len(current) || st.StartOffset != c.Stats()[0].End {
		t.Fatalf("started %+v; want a resnapshot of %d values", st, len(current))
	}
	seen := map[string]bool{}
	prev := int64(-1)
	for range st.Snapshot {
		ev := mustNext(t, w)
		want, ok := current[string(ev.Key)]
		if !ev.Snapshot || ev.Kind != EventPut || !ok || ev.Offset != want.Offset || ev.Offset <= prev || seen[string(ev.Key)] {
			t.Fatalf("snapshot event %s; current %+v", describe(ev), want)
		}
		seen[string(ev.Key)], prev = true, ev.Offset
	}
	live := put(t, c, "k1", "live", PutOptions{})
	if ev := mustNext(t, w); ev.Snapshot || ev.Offset != live.Offset {
		t.Fatalf("after the snapshot: %s", describe(ev))
	}
	// A resume at or after the compacted range replays, no resnapshot.
	w2, err := c.Watch(WatchOptions{Prefix: true, Resume: true, Offset: c.Stats()[0].CompactedThrough})
	if err != nil || w2.Started().Resnapshot {
		t.Fatalf("resume at the compacted boundary: %+v, %v", w2.Started(), err)
	}
}

// A catch-up that compaction overtakes ends as lagged, naming where it
// was; resuming from there resnapshots.
func TestACatchUpOvertakenByCompactionEndsLagged(t *testing.T) {
	_, c := newCache(t, vfs.NewMem(), nil, Config{Durable: true})
	defer c.store.Close()
	for i := range 200 {
		put(t, c, fmt.Sprintf("k%d", i%8), fmt.Sprintf("%d-%040d", i, i), PutOptions{})
	}
	w, err := c.Watch(WatchOptions{Prefix: true, Resume: true, Offset: 0})
	if err != nil {
		t.Fatal(err)
	}
	first := mustNext(t, w)
	if first.Offset != 0 {
		t.Fatalf("first event %s", describe(first))
	}
	if _, err := c.Compact(); err != nil {
		t.Fatal(err)
	}
	var lag *LaggedError
	for {
		_, err := next(t, w)
		if err == nil {
			continue // what the first read fetched
		}
		if !errors.As(err, &lag) || !lag.Compacted {
			t.Fatalf("overtaken catch-up: %v", err)
		}
		break
	}
	w2, err := c.Watch(WatchOptions{Prefix: true, Resume: true, Offset: lag.FirstMissed})
	if err != nil || !w2.Started().Resnapshot {
		t.Fatalf("resume after being overtaken: %+v %v", w2.Started(), err)
	}
}

// The contract's test: a watch that falls behind is ended with a lagged
// error naming the first offset it missed (a filtered watch's offsets are
// sparse, so a drop could not otherwise be seen); what it queued before is
// delivered first, and resuming from the named offset misses nothing.
func TestOverflowEndsTheWatchAndNamesTheFirstMissedOffset(t *testing.T) {
	_, c := newCache(t, vfs.NewMem(), nil, Config{Durable: true})
	defer c.store.Close()
	w, err := c.Watch(WatchOptions{Key: []byte("k"), QueueEvents: 3})
	if err != nil {
		t.Fatal(err)
	}
	var offsets []int64
	for i := range 8 {
		put(t, c, "other", "x", PutOptions{})
		offsets = append(offsets, put(t, c, "k", fmt.Sprint(i), PutOptions{}).Offset)
	}
	for i := range 3 {
		if ev := mustNext(t, w); ev.Offset != offsets[i] {
			t.Fatalf("queued event %d: %s", i, describe(ev))
		}
	}
	_, err = next(t, w)
	var lag *LaggedError
	if !errors.As(err, &lag) || !errors.Is(err, ErrWatchLagged) || lag.FirstMissed != offsets[3] || lag.Compacted {
		t.Fatalf("overflow: %v; want lagged at %d", err, offsets[3])
	}
	w2, err := c.Watch(WatchOptions{Key: []byte("k"), Resume: true, Offset: lag.FirstMissed})
	if err != nil {
		t.Fatal(err)
	}
	for i := 3; i < 8; i++ {
		if ev := mustNext(t, w2); ev.Offset != offsets[i] || string(ev.Value) != fmt.Sprint(i) {
			t.Fatalf("resumed event %s, want offset %d", describe(ev), offsets[i])
		}
	}
}

// A prefix watch reads one shard; a shard out of range is refused.
func TestAPrefixWatchReadsTheShardItNames(t *testing.T) {
	_, c := newCache(t, nil, nil, Config{Shards: 3})
	defer c.store.Close()
	if _, err := c.Watch(WatchOptions{Prefix: true, Shard: 3}); !errors.Is(err, ErrNoShard) {
		t.Fatalf("shard out of range: %v", err)
	}
	if _, err := c.Watch(WatchOptions{Key: []byte("k"), Retained: true, Resume: true}); !errors.Is(err, ErrInvalidWatch) {
		t.Fatalf("retained and resume: %v", err)
	}
	var watches []*Watch
	for sh := range 3 {
		w, err := c.Watch(WatchOptions{Prefix: true, Key: []byte("user/"), Shard: sh})
		if err != nil {
			t.Fatal(err)
		}
		watches = append(watches, w)
	}
	for i := range 30 {
		k := fmt.Sprintf("user/%d", i)
		res := put(t, c, k, "v", PutOptions{})
		put(t, c, fmt.Sprintf("group/%d", i), "v", PutOptions{})
		ev := mustNext(t, watches[c.ShardFor([]byte(k))])
		if string(ev.Key) != k || ev.Offset != res.Offset {
			t.Fatalf("shard %d watch: %s, want %s at %d", c.ShardFor([]byte(k)), describe(ev), k, res.Offset)
		}
	}
}
