package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	fbroker "github.com/felixbroker/felix/broker"
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

// cacheBroker is one broker.Broker on fs/dir, in-process on 127.0.0.1:0,
// its caches on a clock the test moves. A MemFS keeps its files across a
// restart.
type cacheBroker struct {
	t     testing.TB
	fs    vfs.FS
	dir   string
	clock *storeClock
	tune  func(*cache.Options, *netio.Config)
	b     *fbroker.Broker
	eng   *engine.Engine // b's, for tests that look inside
	store *cache.Store   // b's
	srv   *netio.Server  // b's
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
	cfg := fbroker.Config{DataDir: b.dir, FS: b.fs,
		Cache: cache.Options{CompactEvery: -1, Now: b.clock.Now},
		Net:   netio.Config{Addr: "127.0.0.1:0", Multicore: true, EventLoops: 2}}
	if b.tune != nil {
		b.tune(&cfg.Cache, &cfg.Net)
	}
	fb, err := fbroker.Start(cfg)
	if err != nil {
		b.t.Fatal(err)
	}
	b.b, b.eng, b.store, b.srv = fb, fb.Engine(), fb.Caches(), fb.Server()
}

// stop stops the broker. Stopping twice is harmless.
func (b *cacheBroker) stop() {
	if b.b == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.b.Stop(ctx); err != nil {
		b.t.Errorf("stopping the broker: %v", err)
	}
	b.b, b.srv, b.store, b.eng = nil, nil, nil, nil
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
	ca := c.Cache(client.CacheName{Tenant: "acme", Namespace: "prod", Name: name})
	if err := ca.Create(testCtx(t), cfg); err != nil {
		t.Fatal(err)
	}
	return ca
}
