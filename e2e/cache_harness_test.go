package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/netio"
	"github.com/felixbroker/felix/segment/vfs"
)

// storeClock is the cache store's clock in these tests: TTLs pass when a
// test moves it.
type storeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *storeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *storeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// cacheBroker is an engine, a cache store on fs/dir and a netio server
// over both, in-process on 127.0.0.1:0. A MemFS keeps its files across a
// restart.
type cacheBroker struct {
	t     testing.TB
	fs    vfs.FS
	dir   string
	clock *storeClock
	tune  func(*cache.Options, *netio.Config)
	eng   *engine.Engine
	store *cache.Store
	srv   *netio.Server
}

func startCacheBroker(t testing.TB, tune func(*cache.Options, *netio.Config)) *cacheBroker {
	t.Helper()
	b := &cacheBroker{t: t, fs: vfs.NewMem(), dir: "/data", tune: tune,
		clock: &storeClock{now: time.Unix(1_700_000_000, 0)}}
	b.start()
	t.Cleanup(b.stop)
	return b
}

func (b *cacheBroker) start() {
	b.t.Helper()
	eng, err := engine.Open(engine.Options{FS: b.fs, Dir: b.dir})
	if err != nil {
		b.t.Fatal(err)
	}
	opts := cache.Options{FS: b.fs, Dir: b.dir, CompactEvery: -1, Now: b.clock.Now}
	cfg := netio.Config{Addr: "127.0.0.1:0", Engine: eng, Multicore: true, EventLoops: 2}
	if b.tune != nil {
		b.tune(&opts, &cfg)
	}
	store, err := cache.Open(opts)
	if err != nil {
		eng.Close()
		b.t.Fatal(err)
	}
	cfg.Caches = store
	srv, err := netio.NewServer(cfg)
	if err == nil {
		err = srv.Start()
	}
	if err != nil {
		store.Close()
		eng.Close()
		b.t.Fatal(err)
	}
	b.eng, b.store, b.srv = eng, store, srv
}

// stop stops the server, then closes the store and the engine. Stopping
// twice is harmless.
func (b *cacheBroker) stop() {
	if b.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.srv.Stop(ctx); err != nil {
		b.t.Errorf("stopping the server: %v", err)
	}
	if err := b.store.Close(); err != nil {
		b.t.Errorf("closing the cache store: %v", err)
	}
	if err := b.eng.Close(); err != nil {
		b.t.Errorf("closing the engine: %v", err)
	}
	b.srv, b.store, b.eng = nil, nil, nil
}

// restart stops the broker and starts it again on the same files; clients
// dial the new address.
func (b *cacheBroker) restart() {
	b.t.Helper()
	b.stop()
	b.start()
}

func (b *cacheBroker) addr() string { return b.srv.Addr().String() }

// client dials the broker; the client closes when the test ends.
func (b *cacheBroker) client(opts ...client.Option) *client.Client {
	b.t.Helper()
	c, err := client.Dial(testCtx(b.t), b.addr(), opts...)
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() { c.Close() })
	return c
}

// newCache creates a durable cache through the client.
func newCache(t testing.TB, c *client.Client, name string, cfg client.CacheConfig) *client.Cache {
	t.Helper()
	ca := c.Cache("acme", "prod", name)
	if err := ca.Create(testCtx(t), cfg); err != nil {
		t.Fatal(err)
	}
	return ca
}
