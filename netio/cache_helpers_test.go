package netio

import (
	"testing"

	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment/vfs"
)

// cacheFeaturesAll is what a cache client offers.
const cacheFeaturesAll = wire.FeatureCache | wire.FeatureCacheWatch | wire.FeatureCacheWatchRetained | wire.FeatureCounters

// cacheBroker is a test broker with a cache store: durable (counters
// offered) on a MemFS unless a tune says otherwise.
type cacheBroker struct {
	*testBroker
	store *cache.Store
	clock *fakeClock
}

func startCacheBroker(t *testing.T, tune ...func(*cache.Options, *Config)) *cacheBroker {
	t.Helper()
	clock := newFakeClock()
	opts := cache.Options{FS: vfs.NewMem(), Dir: "/data", CompactEvery: -1, Now: clock.Now}
	var mutate []func(*Config)
	for _, f := range tune {
		mutate = append(mutate, func(cfg *Config) { f(&opts, cfg) })
	}
	var store *cache.Store
	first := func(cfg *Config) {
		for _, m := range mutate {
			m(cfg)
		}
		var err error
		if store, err = cache.Open(opts); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() }) // after the server stops: cleanups run last first
		cfg.Caches = store
	}
	b := startBroker(t, first)
	return &cacheBroker{testBroker: b, store: store, clock: clock}
}

// createCache makes a cache through the store (CACHE_CREATE has its own
// test).
func (b *cacheBroker) createCache(name string, cfg cache.Config) wire.CacheRef {
	b.t.Helper()
	id := cache.ID{Tenant: "acme", Namespace: "prod", Name: name}
	if _, err := b.store.Create(id, cfg); err != nil {
		b.t.Fatal(err)
	}
	return wire.CacheRef{Tenant: []byte(id.Tenant), Namespace: []byte(id.Namespace), Cache: []byte(id.Name)}
}

func (b *cacheBroker) cache(ref wire.CacheRef) *cache.Cache {
	b.t.Helper()
	c, err := b.store.Cache(cacheIDOf(ref))
	if err != nil {
		b.t.Fatal(err)
	}
	return c
}

// request sends a frame built for a fresh request id and returns the
// answer.
func (c *rawClient) request(build func(id uint64) []byte) wire.Frame {
	c.t.Helper()
	id := c.id()
	c.send(build(id))
	f := c.read()
	if f.RequestID != id {
		c.t.Fatalf("answer to request %d carries %d (%v: %v)", id, f.RequestID, f.Type, decodeErr(f))
	}
	return f
}

func (c *rawClient) put(m wire.CachePut) wire.Frame {
	return c.request(func(id uint64) []byte { return wire.AppendCachePut(nil, id, m) })
}

func (c *rawClient) get(ref wire.CacheRef, key string) wire.Frame {
	return c.request(func(id uint64) []byte {
		return wire.AppendCacheGet(nil, id, wire.CacheGet{Cache: ref, Key: []byte(key)})
	})
}

func (c *rawClient) del(m wire.CacheDelete) wire.Frame {
	return c.request(func(id uint64) []byte { return wire.AppendCacheDelete(nil, id, m) })
}

// mustPut puts key=value and returns the offset written.
func (c *rawClient) mustPut(ref wire.CacheRef, key, value string) uint64 {
	c.t.Helper()
	return writtenOf(c.t, c.put(wire.CachePut{Cache: ref, Key: []byte(key), Value: []byte(value)})).Offset
}

func writtenOf(t testing.TB, f wire.Frame) wire.CacheWritten {
	t.Helper()
	var m wire.CacheWritten
	if f.Type != wire.TypeCacheWritten {
		t.Fatalf("want CACHE_WRITTEN, got %v: %v", f.Type, decodeErr(f))
	}
	if err := m.Decode(f, wire.Limits{}); err != nil {
		t.Fatal(err)
	}
	return m
}

func valueOf(t testing.TB, f wire.Frame) wire.CacheValue {
	t.Helper()
	var m wire.CacheValue
	if f.Type != wire.TypeCacheValue {
		t.Fatalf("want CACHE_VALUE, got %v: %v", f.Type, decodeErr(f))
	}
	if err := m.Decode(f, wire.Limits{}); err != nil {
		t.Fatal(err)
	}
	return m
}

func counterOf(t testing.TB, f wire.Frame) wire.CounterValue {
	t.Helper()
	var m wire.CounterValue
	if f.Type != wire.TypeCounterValue {
		t.Fatalf("want COUNTER_VALUE, got %v: %v", f.Type, decodeErr(f))
	}
	if err := m.Decode(f, wire.Limits{}); err != nil {
		t.Fatal(err)
	}
	return m
}

// errorOf checks that f is an ERROR with the code.
func errorOf(t testing.TB, f wire.Frame, code wire.Code) *wire.Error {
	t.Helper()
	e := decodeErr(f)
	if e == nil || e.Code != code {
		t.Fatalf("want ERROR %v, got %v: %v", code, f.Type, e)
	}
	return e
}

// watchEvents reads n CACHE_WATCH_EVENT frames of a watch, failing on any
// other frame.
func (c *rawClient) watchEvents(watchID uint64, n int) []wire.CacheWatchEvent {
	c.t.Helper()
	out := make([]wire.CacheWatchEvent, 0, n)
	for len(out) < n {
		f := c.read()
		if f.Type != wire.TypeCacheWatchEvent {
			c.t.Fatalf("want CACHE_WATCH_EVENT after %d events, got %v: %v", len(out), f.Type, decodeErr(f))
		}
		var ev wire.CacheWatchEvent
		if err := ev.Decode(f, wire.Limits{}); err != nil {
			c.t.Fatal(err)
		}
		if ev.WatchID != watchID {
			c.t.Fatalf("event of watch %d, want %d", ev.WatchID, watchID)
		}
		out = append(out, ev)
	}
	return out
}

// watch sends CACHE_WATCH and returns WATCH_STARTED.
func (c *rawClient) watch(m wire.CacheWatch) *wire.WatchStarted {
	c.t.Helper()
	return decodeControl[wire.WatchStarted](c.t, c.control(&m))
}
