package cache

import (
	"testing"
	"time"

	"github.com/felixbroker/felix/segment/vfs"
)

// A value lives while now < its expiry: at the instant itself it is gone.
func TestAValueExpiresAtItsInstantNotBefore(t *testing.T) {
	clk := newClock()
	_, c := newCache(t, nil, clk, Config{})
	defer c.store.Close()
	w := put(t, c, "k", "v", PutOptions{TTL: time.Second})
	if w.ExpiresAt != clk.Now().Add(time.Second).UnixNano() {
		t.Fatalf("expiry %d", w.ExpiresAt)
	}
	clk.Advance(time.Second - time.Nanosecond)
	if it := get(t, c, "k"); !it.Found || it.ExpiresAt != w.ExpiresAt {
		t.Fatalf("one nanosecond before expiry: %+v", it)
	}
	clk.Advance(time.Nanosecond)
	wantMissing(t, c, "k")
}

// A write without a TTL clears the old one; a write with one sets it anew.
func TestAnOverwriteReplacesTheExpiry(t *testing.T) {
	clk := newClock()
	_, c := newCache(t, nil, clk, Config{})
	defer c.store.Close()
	put(t, c, "k", "short", PutOptions{TTL: time.Second})
	put(t, c, "k", "forever", PutOptions{})
	clk.Advance(time.Hour)
	if it := get(t, c, "k"); !it.Found || it.ExpiresAt != 0 {
		t.Fatalf("an overwrite without TTL kept the old expiry: %+v", it)
	}
	put(t, c, "k", "again", PutOptions{TTL: time.Minute})
	clk.Advance(30 * time.Second)
	wantValue(t, c, "k", "again", -1)
	clk.Advance(30 * time.Second)
	wantMissing(t, c, "k")
}

// An absolute expiry already past stores a value no one can read (it is
// still a write, superseding the old value); deleting an expired key
// appends nothing.
func TestAPastExpiryAndADeleteOfAnExpiredKey(t *testing.T) {
	clk := newClock()
	_, c := newCache(t, nil, clk, Config{})
	defer c.store.Close()
	put(t, c, "k", "old", PutOptions{})
	put(t, c, "k", "gone", PutOptions{ExpiresAt: clk.Now().Add(-time.Second).UnixNano()})
	wantMissing(t, c, "k")
	end := c.Stats()[0].End
	d, err := c.Delete([]byte("k"), Condition{})
	if err != nil || d.Existed || d.Offset != -1 || c.Stats()[0].End != end {
		t.Fatalf("delete of an expired key: %+v %v, end %d -> %d", d, err, end, c.Stats()[0].End)
	}
}

// Expiry appends nothing: a watch sees no event when a value expires, and
// compaction drops expired values and their index entries.
func TestExpiryAppendsNothingAndCompactionDropsExpiredValues(t *testing.T) {
	clk, mem := newClock(), vfs.NewMem()
	s, c := newCache(t, mem, clk, Config{Durable: true})
	w, err := c.Watch(WatchOptions{Key: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		put(t, c, "k", "v", PutOptions{TTL: time.Minute})
		put(t, c, "filler", string(make([]byte, i)), PutOptions{})
	}
	end := c.Stats()[0].End
	clk.Advance(time.Hour)
	wantMissing(t, c, "k")
	if c.Stats()[0].End != end {
		t.Fatal("an expiry appended a record")
	}
	for range 100 {
		if ev := mustNext(t, w); ev.Kind != EventPut || ev.ExpiresAt == 0 {
			t.Fatalf("event %s", describe(ev))
		}
	}
	for range 60 { // seal the segment that holds the last write of k
		put(t, c, "k2", string(make([]byte, 100)), PutOptions{})
	}
	if _, err := c.Compact(); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats()[0]; st.Keys != 2 { // filler, k2
		t.Fatalf("after compaction the index holds %d keys", st.Keys)
	}
	wantMissing(t, c, "k")
	s, c = reopen(t, s, mem, clk)
	defer s.Close()
	wantMissing(t, c, "k")
	if st := c.Stats()[0]; st.Keys != 2 {
		t.Fatalf("after restart the index holds %d keys", st.Keys)
	}
}
