package cache

import (
	"context"
	"testing"

	"github.com/felixbroker/felix/engine/cache/volatile"
)

// countingWaiter is a reusable WriteWaiter for the asynchronous path.
type countingWaiter struct{ done chan struct{} }

func (w *countingWaiter) CacheWritten(Written, error) { w.done <- struct{}{} }

// Steady-state puts, gets, adds and live watch deliveries allocate
// nothing: buffers, waiters and operation records are reused.
func TestTheHotPathsAllocateNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	o := testOptions(nil, nil)
	o.SegmentBytes = 0 // the default: no rollover inside the measurement
	c := newCacheWith(t, o, Config{Shards: 2})
	defer c.store.Close()
	key, value := []byte("user/42"), make([]byte, 256)
	dst := make([]byte, 0, 1024)
	put(t, c, "user/42", string(value), PutOptions{})
	w, err := c.Watch(WatchOptions{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cases := map[string]func(){
		"put": func() {
			if _, err := c.Put(key, value, PutOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Next(ctx); err != nil {
				t.Fatal(err)
			}
		},
		"get": func() {
			if it, err := c.Get(key, dst[:0]); err != nil || !it.Found {
				t.Fatal(it, err)
			}
		},
		"put-ttl-if-offset": func() {
			it, _ := c.Get(key, dst[:0])
			if _, err := c.Put(key, value, PutOptions{TTL: 1e12, Cond: Condition{Kind: CondIfOffset, Offset: it.Offset}}); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Next(ctx); err != nil {
				t.Fatal(err)
			}
		},
	}
	o.ValueCacheBytes = -1
	uncached := newCacheWith(t, o, Config{Shards: 2})
	defer uncached.store.Close()
	put(t, uncached, "user/42", string(value), PutOptions{})
	cases["get-from-the-log"] = func() {
		if it, err := uncached.Get(key, dst[:0]); err != nil || !it.Found {
			t.Fatal(it, err)
		}
	}
	async := &countingWaiter{done: make(chan struct{}, 1)}
	cases["put-async"] = func() {
		if err := c.PutAsync(key, value, PutOptions{}, async); err != nil {
			t.Fatal(err)
		}
		<-async.done
		w.Next(ctx)
	}
	for name, f := range cases {
		f()
		if n := testing.AllocsPerRun(200, f); n != 0 {
			t.Errorf("%s: %.1f allocations per operation", name, n)
		}
	}
}

// Counter adds allocate nothing once the counter exists (durable only).
func TestACounterAddAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	o := testOptions(newMemForAllocs(), nil)
	o.SegmentBytes = 0
	s := openStore(t, o)
	defer s.Close()
	if _, err := s.Create(cid, Config{Durable: true}); err != nil {
		t.Fatal(err)
	}
	c := mustCache(t, s)
	key := []byte("hits")
	c.CounterAdd(key, 1)
	if n := testing.AllocsPerRun(200, func() {
		if _, err := c.CounterAdd(key, 1); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("counter add: %.1f allocations per operation", n)
	}
	if n := testing.AllocsPerRun(200, func() { c.CounterGet(key) }); n != 0 {
		t.Errorf("counter get: %.1f allocations per operation", n)
	}
}

// newMemForAllocs is a durable-looking FS that is memory underneath (the
// volatile FS: MemFS itself allocates on every write to track durability).
func newMemForAllocs() *volatile.FS { return volatile.New() }

// The ring of writes not yet visible holds only those: it does not grow
// with the number of writes.
func TestThePendingRingStaysSmall(t *testing.T) {
	_, c := newCache(t, nil, nil, Config{})
	defer c.store.Close()
	for i := range 5000 {
		put(t, c, "k", string(rune('a'+i%26)), PutOptions{})
	}
	sh := c.held(0)
	sh.writeMu.Lock()
	defer sh.writeMu.Unlock()
	if n := len(sh.pending.slots); n > 64 {
		t.Fatalf("the pending ring grew to %d slots for writes one at a time", n)
	}
}
