package cache

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment/vfs"
)

var cid = ID{Tenant: "acme", Namespace: "app", Name: "sessions"}

// clock is a fake clock tests move by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// testOptions are small enough that a few hundred writes roll over several
// segments; the background compactor is off (tests call Compact).
func testOptions(fs vfs.FS, clk *clock) Options {
	o := Options{FS: fs, Dir: "/data", Fsync: shardlog.OnCommit(), SegmentBytes: 4096, BufferBytes: 4096,
		IndexIntervalBytes: 256, CompactEvery: -1}
	if fs == nil {
		o.Dir = ""
	}
	if clk != nil {
		o.Now = clk.Now
	}
	return o
}

func openStore(t testing.TB, o Options) *Store {
	t.Helper()
	s, err := Open(o)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return s
}

// newCache opens a store on fs and creates the test cache in it.
func newCache(t testing.TB, fs vfs.FS, clk *clock, cfg Config) (*Store, *Cache) {
	t.Helper()
	s := openStore(t, testOptions(fs, clk))
	if _, err := s.Create(cid, cfg); err != nil {
		t.Fatal(err)
	}
	return s, mustCache(t, s)
}

func mustCache(t testing.TB, s *Store) *Cache {
	t.Helper()
	c, err := s.Cache(cid)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// reopen closes the store and opens it again over the same FS.
func reopen(t testing.TB, s *Store, fs vfs.FS, clk *clock) (*Store, *Cache) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, testOptions(fs, clk))
	return s, mustCache(t, s)
}

func put(t testing.TB, c *Cache, key, value string, opts PutOptions) Written {
	t.Helper()
	w, err := c.Put([]byte(key), []byte(value), opts)
	if err != nil {
		t.Fatalf("put %s=%s: %v", key, value, err)
	}
	return w
}

func get(t testing.TB, c *Cache, key string) Item {
	t.Helper()
	it, err := c.Get([]byte(key), nil)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	return it
}

// wantValue asserts the key's value (and, when off >= 0, its offset).
func wantValue(t testing.TB, c *Cache, key, value string, off int64) {
	t.Helper()
	it := get(t, c, key)
	if !it.Found || string(it.Value) != value || (off >= 0 && it.Offset != off) {
		t.Fatalf("get %s = %+v (value %q); want %q at offset %d", key, it, it.Value, value, off)
	}
}

func wantMissing(t testing.TB, c *Cache, key string) {
	t.Helper()
	if it := get(t, c, key); it.Found {
		t.Fatalf("get %s = %q at %d; want no value", key, it.Value, it.Offset)
	}
}

// next reads one event with a deadline, copying Key and Value.
func next(t testing.TB, w *Watch) (Event, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ev, err := w.Next(ctx)
	ev.Key, ev.Value = bytes.Clone(ev.Key), bytes.Clone(ev.Value)
	return ev, err
}

func mustNext(t testing.TB, w *Watch) Event {
	t.Helper()
	ev, err := next(t, w)
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	return ev
}

func describe(ev Event) string {
	kind := "put"
	if ev.Kind == EventDelete {
		kind = "del"
	}
	return fmt.Sprintf("%s %s=%s @%d snap=%v", kind, ev.Key, ev.Value, ev.Offset, ev.Snapshot)
}
