package netio

import (
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/ring"
	"github.com/felixbroker/felix/segment/vfs"
)

// hotID names the cache loopCacheConnWith creates.
var hotID = cache.ID{Tenant: "acme", Namespace: "prod", Name: "hot"}

// loopCacheConn is a connection of a never-started server with a durable
// Periodic cache store on fs, driven as the loop would (loopConn), after
// HELLO.
func loopCacheConn(t *testing.T, fs vfs.FS) (*conn, *loopConn, wire.CacheRef) {
	t.Helper()
	return loopCacheConnWith(t, cache.Options{FS: fs, Dir: t.TempDir(), Fsync: shardlog.Periodic(time.Hour), CompactEvery: -1},
		cache.Config{Shards: 2, Durable: true})
}

// loopCacheConnWith is loopCacheConn with the store's options and the
// cache's config (the cache is hotID).
func loopCacheConnWith(t *testing.T, opts cache.Options, cfg cache.Config) (*conn, *loopConn, wire.CacheRef) {
	t.Helper()
	e, err := engine.Open(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	store, err := cache.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if _, err := store.Create(hotID, cfg); err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(Config{Engine: e, BrokerID: "b1", Caches: store})
	if err != nil {
		t.Fatal(err)
	}
	fc := &loopConn{}
	c := newConn(s, fc)
	fc.in = wire.AppendHello(nil, 1, wire.Hello{VersionMin: 1, VersionMax: 1, Features: wire.FeaturesAll})
	c.traffic()
	fc.out = fc.out[:0]
	return c, fc, wire.CacheRef{Tenant: []byte(hotID.Tenant), Namespace: []byte(hotID.Namespace), Cache: []byte(hotID.Name)}
}

// Under Periodic, with the shard's committer idle, a put or delete that
// ends a socket read is written by the loop and answered in that read's
// own write: the answer is out when OnTraffic returns, with nothing
// handed to the committer or queued for the loop (no AsyncWrite). The
// value is there to read at once.
func TestAWriteEndingAReadIsAnsweredInTheReadsOwnWrite(t *testing.T) {
	c, fc, ref := loopCacheConn(t, vfs.NewMem())
	for i, frame := range [][]byte{
		wire.AppendCachePut(nil, 10, wire.CachePut{Cache: ref, Key: []byte("k"), Value: []byte("v1")}),
		wire.AppendCachePut(nil, 11, wire.CachePut{Cache: ref, Key: []byte("k"), Value: []byte("v2")}),
		wire.AppendCacheDelete(nil, 12, wire.CacheDelete{Cache: ref, Key: []byte("k")}),
	} {
		fc.in = frame
		c.traffic()
		if len(fc.pending) != 0 {
			t.Fatalf("write %d: %d writes queued for the loop", i, len(fc.pending))
		}
		f := readFrame(t, fc.out)
		if w := writtenOf(t, f); f.RequestID != uint64(10+i) || w.Offset != uint64(i) || w.Existed != (i > 0) {
			t.Fatalf("write %d answered %d: %+v", i, f.RequestID, w)
		}
		fc.out = fc.out[:0]
	}
	fc.in = wire.AppendCacheGet(nil, 13, wire.CacheGet{Cache: ref, Key: []byte("k")})
	c.traffic()
	if v := valueOf(t, readFrame(t, fc.out)); v.Found {
		t.Fatalf("the deleted key: %+v", v)
	}
}

func TestAPutAnsweredOnTheLoopAllocatesNothingInSteadyState(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	d, err := ring.Open(ring.Config{}) // the real files: the memory FS allocates as it writes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	c, fc, ref := loopCacheConn(t, vfs.NewOS(d))
	frame := wire.AppendCachePut(nil, 2, wire.CachePut{Cache: ref, Key: []byte("k"), Value: make([]byte, 256)})
	put := func() {
		fc.in = frame
		c.traffic()
		if len(fc.out) == 0 || len(fc.pending) != 0 {
			t.Fatal("the put was not answered on the loop")
		}
		fc.out = fc.out[:0]
	}
	for range 100 {
		put()
	}
	if a := testing.AllocsPerRun(500, put); a > 0 {
		t.Errorf("a put: %.2f allocations", a)
	}
}

// readFrame decodes the one whole frame b holds.
func readFrame(t *testing.T, b []byte) wire.Frame {
	t.Helper()
	var r wire.Reader
	f, need, err := r.Next(b)
	if err != nil || need != 0 {
		t.Fatalf("no whole frame in %d bytes (need %d): %v", len(b), need, err)
	}
	return f
}
