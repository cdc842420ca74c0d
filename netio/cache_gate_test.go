package netio

import (
	"strings"
	"sync"
	"testing"

	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment/vfs"
)

// holdFS holds every write to a values log while held is set, so a test
// can keep a cache write appended and not yet visible for as long as it
// likes.
type holdFS struct {
	vfs.FS
	mu      sync.Mutex
	held    bool
	holding chan struct{} // closed when a write is being held
	release chan struct{} // closed to let held writes go
}

func newHoldFS() *holdFS { return &holdFS{FS: vfs.NewMem()} }

func (f *holdFS) hold() {
	f.mu.Lock()
	f.held, f.holding, f.release = true, make(chan struct{}), make(chan struct{})
	f.mu.Unlock()
}

// let lets the held writes go; letting twice is harmless.
func (f *holdFS) let() {
	f.mu.Lock()
	if f.held {
		f.held = false
		close(f.release)
	}
	f.mu.Unlock()
}

// wait blocks a write to a values log while the FS is held.
func (f *holdFS) wait(name string) {
	if !strings.Contains(name, "/values/") {
		return
	}
	f.mu.Lock()
	if !f.held {
		f.mu.Unlock()
		return
	}
	select {
	case <-f.holding:
	default:
		close(f.holding)
	}
	release := f.release
	f.mu.Unlock()
	<-release
}

func (f *holdFS) Create(name string) (vfs.File, error) {
	file, err := f.FS.Create(name)
	return holdFile{file, f}, err
}

func (f *holdFS) OpenReadWrite(name string) (vfs.File, error) {
	file, err := f.FS.OpenReadWrite(name)
	return holdFile{file, f}, err
}

type holdFile struct {
	vfs.File
	fs *holdFS
}

func (h holdFile) WriteAt(p []byte, off int64) (int, error) {
	h.fs.wait(h.Name())
	return h.File.WriteAt(p, off)
}

func (h holdFile) WriteAtSync(p []byte, off int64) (int, error) {
	h.fs.wait(h.Name())
	return h.File.WriteAtSync(p, off)
}

// TestAGetWaitingForACommitNeverHoldsItsLoop: while a put of a key cannot
// become visible (its log's write is held), a get of that key waits for
// it, on a worker: the connection that sent the get goes on being served
// (a PING sent after it is answered first), a get of another key of the
// same shard is answered, and once the write goes through both the put
// and the get are answered, the get with the new value. The cache syncs
// on commit, so the put's write is the committer's: under None and
// Periodic the loop may write a put itself (a page-cache write; see
// writeHereBytes), and a held disk would hold that loop.
func TestAGetWaitingForACommitNeverHoldsItsLoop(t *testing.T) {
	fs := newHoldFS()
	b := startCacheBroker(t, func(o *cache.Options, cfg *Config) {
		o.FS = fs
		o.Fsync = shardlog.OnCommit()
		cfg.EventLoops = 1 // every connection on one loop: a held loop would stall them all
	})
	t.Cleanup(fs.let) // before the broker stops: a failed test must not leave a write held
	ref := b.createCache("c", cache.Config{Durable: true})
	writer, reader := b.client(cacheFeaturesAll), b.client(cacheFeaturesAll)
	writer.mustPut(ref, "k", "old")
	writer.mustPut(ref, "other", "x")

	fs.hold()
	writer.send(wire.AppendCachePut(nil, 100, wire.CachePut{Cache: ref, Key: []byte("k"), Value: []byte("new")}))
	<-fs.holding
	reader.send(wire.AppendCacheGet(nil, 200, wire.CacheGet{Cache: ref, Key: []byte("k")}))
	if v := valueOf(t, reader.get(ref, "other")); !v.Found || string(v.Value) != "x" {
		t.Fatalf("another key of the shard: %+v", v)
	}
	if extra := reader.ping(); len(extra) != 0 {
		t.Fatalf("%v answered while its write is held", extra[0].Type)
	}
	fs.let()
	if w := writtenOf(t, writer.read()); !w.Existed {
		t.Fatalf("the held put: %+v", w)
	}
	f := reader.read()
	if v := valueOf(t, f); f.RequestID != 200 || !v.Found || string(v.Value) != "new" {
		t.Fatalf("the waiting get (request %d): %+v", f.RequestID, v)
	}
}

func TestAGetOnTheLoopAllocatesNothingInSteadyState(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	c, fc, ref := loopCacheConnWith(t, cache.Options{CompactEvery: -1}, cache.Config{Shards: 4})
	ca, _ := c.s.cfg.Caches.Cache(hotID)
	for _, k := range []string{"hit", "miss-never-written"}[:1] {
		if _, err := ca.Put([]byte(k), make([]byte, 256), cache.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, key := range []string{"hit", "miss"} {
		frame := wire.AppendCacheGet(nil, 2, wire.CacheGet{Cache: ref, Key: []byte(key)})
		get := func() {
			fc.in = frame
			c.traffic()
			fc.out = fc.out[:0]
		}
		for range 100 {
			get()
		}
		if a := testing.AllocsPerRun(500, get); a > 0 {
			t.Errorf("a get of %q: %.2f allocations", key, a)
		}
	}
}
