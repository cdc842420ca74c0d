package cache

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/segment/vfs"
)

// stateAt replays the shard's log below cut into the values of the keys
// with prefix: what a retained watch cut there must deliver.
func stateAt(t *testing.T, c *Cache, prefix string, cut int64) map[string]string {
	t.Helper()
	state := map[string]string{}
	if cut == 0 {
		return state
	}
	w, err := c.Watch(WatchOptions{Prefix: true, Key: []byte(prefix), Resume: true, Offset: 0, QueueEvents: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	end := c.Stats()[0].End
	last := int64(-1)
	for last < cut-1 && last < end-1 {
		ev := mustNext(t, w)
		if ev.Offset >= cut {
			break
		}
		last = ev.Offset
		if ev.Kind == EventDelete {
			delete(state, string(ev.Key))
		} else {
			state[string(ev.Key)] = fmt.Sprintf("%s@%d", ev.Value, ev.Offset)
		}
	}
	return state
}

// The contract's test: a retained watch delivers each matching key's
// current value first, at the offset of the write that produced it, then
// the live changes, with no gap between, while writers keep writing.
func TestARetainedWatchDeliversCurrentStateThenLiveUnderConcurrentWrites(t *testing.T) {
	_, c := newCache(t, vfs.NewMem(), nil, Config{Durable: true})
	defer c.store.Close()
	for i := range 100 {
		put(t, c, fmt.Sprintf("user/%d", i%13), fmt.Sprint(i), PutOptions{})
		put(t, c, fmt.Sprintf("other/%d", i%5), fmt.Sprint(i), PutOptions{})
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 120 {
				k := fmt.Sprintf("user/%d", (i*7+w)%15)
				if i%11 == 0 {
					c.Delete([]byte(k), Condition{})
					continue
				}
				if _, err := c.Put([]byte(k), fmt.Appendf(nil, "w%d-%d", w, i), PutOptions{}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	go func() {
		wg.Wait()
		c.Put([]byte("user/zz-last"), []byte("end"), PutOptions{})
	}()
	w, err := c.Watch(WatchOptions{Prefix: true, Key: []byte("user/"), Retained: true, QueueEvents: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	st := w.Started()
	got := map[string]string{}
	prev := int64(-1)
	for range st.Snapshot {
		ev := mustNext(t, w)
		if !ev.Snapshot || ev.Kind != EventPut || ev.Offset >= st.StartOffset || ev.Offset <= prev {
			t.Fatalf("snapshot event %s (cut %d)", describe(ev), st.StartOffset)
		}
		prev = ev.Offset
		got[string(ev.Key)] = fmt.Sprintf("%s@%d", ev.Value, ev.Offset)
	}
	if want := stateAt(t, c, "user/", st.StartOffset); fmt.Sprint(want) != fmt.Sprint(got) {
		t.Fatalf("retained state at cut %d:\n got %v\nwant %v", st.StartOffset, got, want)
	}
	// Then every write of the prefix from the cut on, in order, once.
	var gotLive []string
	for {
		ev := mustNext(t, w)
		if ev.Snapshot {
			t.Fatalf("a snapshot event after the snapshot: %s", describe(ev))
		}
		gotLive = append(gotLive, describe(ev))
		if string(ev.Key) == "user/zz-last" {
			break
		}
	}
	var wantLive []string
	for _, e := range logOf(t, c, 0, st.StartOffset) {
		if strings.HasPrefix(e[4:], "user/") {
			wantLive = append(wantLive, e)
		}
	}
	if fmt.Sprint(gotLive) != fmt.Sprint(wantLive) {
		t.Fatalf("live events after the cut:\n got %v\nwant %v", gotLive, wantLive)
	}
}

// The contract's test: a retained watch on a key with no value (never
// written, deleted, expired) starts with a definite zero, then delivers
// the first write live.
func TestARetainedWatchOnAnEmptyKeyReportsNoValue(t *testing.T) {
	clk := newClock()
	_, c := newCache(t, nil, clk, Config{})
	defer c.store.Close()
	put(t, c, "deleted", "v", PutOptions{})
	c.Delete([]byte("deleted"), Condition{})
	put(t, c, "expired", "v", PutOptions{TTL: time.Second})
	clk.Advance(time.Second)
	for _, k := range []string{"never", "deleted", "expired"} {
		w, err := c.Watch(WatchOptions{Key: []byte(k), Retained: true})
		if err != nil {
			t.Fatal(err)
		}
		if st := w.Started(); st.Snapshot != 0 || st.Resnapshot || st.StartOffset != c.Stats()[0].End {
			t.Fatalf("%s: started %+v", k, st)
		}
		res := put(t, c, k, "now", PutOptions{})
		if ev := mustNext(t, w); ev.Snapshot || ev.Offset != res.Offset || string(ev.Value) != "now" {
			t.Fatalf("%s: first event %s", k, describe(ev))
		}
		w.Close()
	}
	// A prefix with nothing under it is a zero too.
	w, err := c.Watch(WatchOptions{Prefix: true, Key: []byte("nothing/"), Retained: true})
	if err != nil || w.Started().Snapshot != 0 {
		t.Fatalf("empty prefix: %+v %v", w.Started(), err)
	}
}

// The contract's test: the retained value comes from the log rebuilt at
// open, at the offset of the write that produced it.
func TestARetainedValueSurvivesARestart(t *testing.T) {
	mem := vfs.NewMem()
	s, c := newCache(t, mem, nil, Config{Durable: true, Shards: 2})
	put(t, c, "cfg", "old", PutOptions{})
	res := put(t, c, "cfg", "current", PutOptions{})
	put(t, c, "cfg/sub", "other", PutOptions{})
	s, c = reopen(t, s, mem, nil)
	defer s.Close()
	w, err := c.Watch(WatchOptions{Key: []byte("cfg"), Retained: true})
	if err != nil {
		t.Fatal(err)
	}
	if st := w.Started(); st.Snapshot != 1 {
		t.Fatalf("started %+v", st)
	}
	if ev := mustNext(t, w); !ev.Snapshot || string(ev.Value) != "current" || ev.Offset != res.Offset {
		t.Fatalf("retained event %s, want current at %d", describe(ev), res.Offset)
	}
	live := put(t, c, "cfg", "next", PutOptions{})
	if ev := mustNext(t, w); ev.Snapshot || ev.Offset != live.Offset {
		t.Fatalf("live event %s", describe(ev))
	}
}

// A snapshot larger than its bound is refused rather than held in memory.
func TestASnapshotOverItsBoundIsRefused(t *testing.T) {
	o := testOptions(nil, nil)
	o.SnapshotBytesMax = 1000
	c := newCacheWith(t, o, Config{})
	defer c.store.Close()
	for i := range 20 {
		put(t, c, fmt.Sprintf("k%d", i), fmt.Sprintf("%0100d", i), PutOptions{})
	}
	if _, err := c.Watch(WatchOptions{Prefix: true, Retained: true}); err == nil || c.Stats()[0].Watches != 0 {
		t.Fatalf("an oversized snapshot: %v, %d watches left", err, c.Stats()[0].Watches)
	}
}
