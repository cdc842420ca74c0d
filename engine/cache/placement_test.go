package cache

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/segment/vfs"
	"github.com/felixbroker/felix/segment/vfs/errorfs"
)

// placement is a fake engine.Placement whose held shards a test changes;
// it is also the Ownership: this broker leads what it holds, and
// otherLeader leads the rest.
type placement struct {
	mu   sync.Mutex
	held map[engine.StreamID]map[int]bool
}

const otherLeader = "broker-2:7400"

func newPlacement() *placement { return &placement{held: map[engine.StreamID]map[int]bool{}} }

// hold makes the cache's held shards exactly shards.
func (p *placement) hold(id ID, shards ...int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	set := map[int]bool{}
	for _, i := range shards {
		set[i] = true
	}
	p.held[id.OwnershipID()] = set
}

func (p *placement) Holds(id engine.StreamID, shard int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held[id][shard]
}

func (p *placement) Leader(id engine.StreamID, shard int) (bool, string) {
	if p.Holds(id, shard) {
		return true, ""
	}
	return false, otherLeader
}

// placedStore opens a store on fs whose broker holds what p says, over
// catalog (nil: the store's own).
func placedStore(t *testing.T, fs vfs.FS, p *placement, catalog Catalog) *Store {
	t.Helper()
	o := testOptions(fs, nil)
	o.Placement, o.Owner, o.Catalog = p, p, catalog
	s := openStore(t, o)
	t.Cleanup(func() { s.Close() })
	return s
}

// taggedKey is a key of the cache's shard.
func taggedKey(c *Cache, shard int, tag string) []byte {
	for i := 0; ; i++ {
		if k := fmt.Appendf(nil, "%s-%d", tag, i); c.ShardFor(k) == shard {
			return k
		}
	}
}

// shardDirs lists the shard directories of the cache on fs.
func shardDirs(t *testing.T, fs vfs.FS, id ID) []string {
	t.Helper()
	names, err := fs.List(cacheDir("/data", id))
	if errors.Is(err, vfs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func wantDirs(t *testing.T, fs vfs.FS, id ID, want ...string) {
	t.Helper()
	if got := shardDirs(t, fs, id); !slices.Equal(got, want) {
		t.Fatalf("shard directories of %s: %v; want %v", id, got, want)
	}
}

// wantNotLeader asserts err redirects shard's operations to otherLeader.
func wantNotLeader(t *testing.T, what string, err error, id ID, shard int) {
	t.Helper()
	var nle *engine.NotLeaderError
	if !errors.Is(err, engine.ErrNotLeader) || !errors.As(err, &nle) {
		t.Fatalf("%s on a shard not held: %v; want *engine.NotLeaderError", what, err)
	}
	if nle.Leader != otherLeader || nle.Shard != shard || nle.Stream != id.OwnershipID() {
		t.Fatalf("%s on a shard not held: %+v; want shard %d of %v led by %s", what, nle, shard, id.OwnershipID(), otherLeader)
	}
}

// A cache of four shards on a broker holding shards 1 and 3 has logs for
// those only; every operation on shard 0 is redirected to its leader,
// those of held shards are served, and the shard count is the cache's.
func TestOnlyTheHeldShardsOpen(t *testing.T) {
	mem := vfs.NewMem()
	p := newPlacement()
	p.hold(cid, 1, 3)
	s := placedStore(t, mem, p, nil)
	if _, err := s.Create(cid, Config{Shards: 4, Durable: true}); err != nil {
		t.Fatal(err)
	}
	c := mustCache(t, s)
	wantDirs(t, mem, cid, "shard-0001", "shard-0003")
	if c.Shards() != 4 {
		t.Fatalf("Shards() = %d; want 4", c.Shards())
	}

	k0 := taggedKey(c, 0, "away")
	wantNotLeaderEverywhere(t, c, k0, 0)

	for _, i := range []int{1, 3} {
		k := taggedKey(c, i, "here")
		put(t, c, string(k), "v", PutOptions{})
		wantValue(t, c, string(k), "v", -1)
		if v, err := c.CounterAdd(k, 2); err != nil || v.Sum != 2 {
			t.Fatalf("counter add on held shard %d: %+v, %v", i, v, err)
		}
	}
	st := c.Stats()
	if len(st) != 4 || st[0].Open || st[2].Open || !st[1].Open || !st[3].Open || st[1].Keys != 1 {
		t.Fatalf("stats: %+v", st)
	}
	if _, err := c.Compact(); err != nil {
		t.Fatalf("compact: %v", err)
	}
	if n := s.TenantBytes(cid.Tenant); n <= 0 {
		t.Fatalf("TenantBytes = %d", n)
	}
	s.compactDue() // walks the held shards only
}

// wantNotLeaderEverywhere asserts every operation on key, of shard, is
// redirected.
func wantNotLeaderEverywhere(t *testing.T, c *Cache, key []byte, shard int) {
	t.Helper()
	_, err := c.Put(key, []byte("v"), PutOptions{})
	wantNotLeader(t, "put", err, c.ID(), shard)
	wantNotLeader(t, "put async here", c.PutAsyncHere(key, []byte("v"), PutOptions{}, nil, 1<<10), c.ID(), shard)
	_, err = c.Get(key, nil)
	wantNotLeader(t, "get", err, c.ID(), shard)
	_, err = c.Delete(key, Condition{})
	wantNotLeader(t, "delete", err, c.ID(), shard)
	wantNotLeader(t, "delete async here", c.DeleteAsyncHere(key, Condition{}, nil, 1<<10), c.ID(), shard)
	_, err = c.CounterAdd(key, 1)
	wantNotLeader(t, "counter add", err, c.ID(), shard)
	_, err = c.CounterGet(key)
	wantNotLeader(t, "counter get", err, c.ID(), shard)
	_, err = c.Watch(WatchOptions{Key: key})
	wantNotLeader(t, "key watch", err, c.ID(), shard)
	_, err = c.Watch(WatchOptions{Prefix: true, Shard: shard, Retained: true})
	wantNotLeader(t, "prefix watch", err, c.ID(), shard)
}

// Reconcile follows the placement: a shard no longer held closes (its
// watch ends with the redirect, its directory stays), a newly held one
// opens, and one held again comes back with what was written before.
func TestReconcileFollowsThePlacement(t *testing.T) {
	mem := vfs.NewMem()
	p := newPlacement()
	p.hold(cid, 1, 3)
	s := placedStore(t, mem, p, nil)
	if _, err := s.Create(cid, Config{Shards: 4, Durable: true}); err != nil {
		t.Fatal(err)
	}
	c := mustCache(t, s)
	k1 := taggedKey(c, 1, "one")
	put(t, c, string(k1), "before", PutOptions{})
	if _, err := c.CounterAdd(k1, 5); err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(WatchOptions{Key: k1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	p.hold(cid, 0, 3)
	if err := s.Reconcile(); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	_, err = next(t, w)
	wantNotLeader(t, "the watch of a released shard", err, cid, 1)
	wantDirs(t, mem, cid, "shard-0000", "shard-0001", "shard-0003")
	wantNotLeaderEverywhere(t, c, k1, 1)
	k0 := taggedKey(c, 0, "zero")
	put(t, c, string(k0), "new", PutOptions{})
	wantValue(t, c, string(k0), "new", -1)

	p.hold(cid, 0, 1, 3)
	if err := s.Reconcile(); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	wantValue(t, c, string(k1), "before", 0)
	if v, err := c.CounterGet(k1); err != nil || v.Sum != 5 {
		t.Fatalf("counter after the shard came back: %+v, %v", v, err)
	}
	put(t, c, string(k1), "after", PutOptions{})
	wantValue(t, c, string(k1), "after", 1)
	if err := s.Reconcile(); err != nil { // nothing changed: nothing to do
		t.Fatalf("reconcile: %v", err)
	}
	wantValue(t, c, string(k1), "after", 1)
}

// Reconcile follows the catalog: a cache created there behind the store's
// back opens (its held shards), one deleted there is dropped (its watches
// end, its files go), and one dropped and created anew under the same name
// replaces the old one's files.
func TestReconcileFollowsTheCatalog(t *testing.T) {
	mem := vfs.NewMem()
	p := newPlacement()
	other := ID{Tenant: "acme", Namespace: "app", Name: "elsewhere"}
	p.hold(other, 0, 2)
	cat, err := OpenFileCatalog(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	s := placedStore(t, mem, p, cat)
	created := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	info := Info{ID: other, Config: Config{Shards: 3, Durable: true, ReplicationFactor: 1}, Generation: 1, Created: created}
	if err := cat.Create(info); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Cache(other); !errors.Is(err, ErrCacheNotFound) {
		t.Fatalf("a cache the store has not reconciled yet: %v", err)
	}
	if err := s.Reconcile(); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	c, err := s.Cache(other)
	if err != nil {
		t.Fatal(err)
	}
	wantDirs(t, mem, other, "shard-0000", "shard-0002")
	k := taggedKey(c, 2, "k")
	put(t, c, string(k), "v", PutOptions{})
	wantNotLeaderEverywhere(t, c, taggedKey(c, 1, "k"), 1)

	// Dropped and created anew elsewhere: the old cache's files go.
	if err := cat.Delete(other); err != nil {
		t.Fatal(err)
	}
	info.Created = created.Add(time.Hour)
	if err := cat.Create(info); err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(WatchOptions{Key: k})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Reconcile(); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	if _, err := next(t, w); !errors.Is(err, ErrCacheDropped) {
		t.Fatalf("the watch of a cache created anew: %v", err)
	}
	if _, err := c.Get(k, nil); !errors.Is(err, ErrCacheDropped) {
		t.Fatalf("a get on the old cache: %v", err)
	}
	c = mustCacheID(t, s, other)
	wantMissing(t, c, string(k))

	// Deleted elsewhere: dropped here, its files gone.
	if err := cat.Delete(other); err != nil {
		t.Fatal(err)
	}
	if err := s.Reconcile(); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	if _, err := s.Cache(other); !errors.Is(err, ErrCacheNotFound) {
		t.Fatalf("a cache deleted from the catalog: %v", err)
	}
	if _, err := c.Get(k, nil); !errors.Is(err, ErrCacheDropped) {
		t.Fatalf("a get on a dropped cache: %v", err)
	}
	wantDirs(t, mem, other)
}

func mustCacheID(t *testing.T, s *Store, id ID) *Cache {
	t.Helper()
	c, err := s.Cache(id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Drop of a cache whose catalog entry another broker removed first still
// stops it here and removes its files.
func TestDropOfACacheTheCatalogLostStillRemovesIt(t *testing.T) {
	mem := vfs.NewMem()
	cat, err := OpenFileCatalog(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	p := newPlacement()
	p.hold(cid, 0, 1)
	s := placedStore(t, mem, p, cat)
	if _, err := s.Create(cid, Config{Shards: 2, Durable: true}); err != nil {
		t.Fatal(err)
	}
	c := mustCache(t, s)
	put(t, c, "k", "v", PutOptions{})
	if err := cat.Delete(cid); err != nil {
		t.Fatal(err)
	}
	if err := s.Drop(cid); err != nil {
		t.Fatalf("drop: %v", err)
	}
	if _, err := c.Get([]byte("k"), nil); !errors.Is(err, ErrCacheDropped) {
		t.Fatalf("get after drop: %v", err)
	}
	if _, err := s.Cache(cid); !errors.Is(err, ErrCacheNotFound) {
		t.Fatalf("cache after drop: %v", err)
	}
	wantDirs(t, mem, cid)
}

// A shard that fails to open fails Reconcile with an error naming it,
// while the rest is reconciled; its operations answer that failure, and a
// later Reconcile opens it once the fault is gone.
func TestReconcileRetriesAShardThatFailedToOpen(t *testing.T) {
	mem := vfs.NewMem()
	efs := errorfs.Wrap(mem)
	p := newPlacement()
	p.hold(cid, 1)
	s := placedStore(t, efs, p, nil)
	if _, err := s.Create(cid, Config{Shards: 4, Durable: true}); err != nil {
		t.Fatal(err)
	}
	c := mustCache(t, s)
	efs.Inject(errorfs.Rule{Op: errorfs.Any, PathContains: "shard-0002"})
	p.hold(cid, 1, 2, 3)
	err := s.Reconcile()
	if !errors.Is(err, errorfs.ErrInjected) || !strings.Contains(err.Error(), "shard 2") {
		t.Fatalf("reconcile over a failing shard: %v", err)
	}
	k2, k3 := taggedKey(c, 2, "k"), taggedKey(c, 3, "k")
	put(t, c, string(k3), "v", PutOptions{}) // the rest was reconciled
	if _, err := c.Put(k2, []byte("v"), PutOptions{}); !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("put on the shard that failed to open: %v", err)
	}
	if err := s.Reconcile(); !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("reconcile, the fault still there: %v", err)
	}
	efs.Clear()
	if err := s.Reconcile(); err != nil {
		t.Fatalf("reconcile once the fault is gone: %v", err)
	}
	put(t, c, string(k2), "v2", PutOptions{})
	wantValue(t, c, string(k2), "v2", 0)

	// A failed shard no longer held is forgotten: it redirects.
	efs.Inject(errorfs.Rule{Op: errorfs.Any, PathContains: "shard-0000"})
	p.hold(cid, 0, 1, 2, 3)
	if err := s.Reconcile(); !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("reconcile over a failing shard: %v", err)
	}
	p.hold(cid, 1, 2, 3)
	if err := s.Reconcile(); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	_, err = c.Get(taggedKey(c, 0, "k"), nil)
	wantNotLeader(t, "get on a shard that failed to open and is no longer held", err, cid, 0)
}

// Reconcile runs safely beside every operation, Create and Drop: an
// operation is served or redirected, never anything else, while the
// shards come and go.
func TestReconcileBesideOperations(t *testing.T) {
	mem := vfs.NewMem()
	p := newPlacement()
	p.hold(cid, 0, 1, 2, 3)
	s := placedStore(t, mem, p, nil)
	if _, err := s.Create(cid, Config{Shards: 4, Durable: true}); err != nil {
		t.Fatal(err)
	}
	c := mustCache(t, s)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 4 {
		wg.Go(func() { errs <- hammer(c, g, stop) })
	}
	wg.Go(func() { errs <- createAndDrop(s, stop) })
	for round := range 40 {
		p.hold(cid, round%4, (round+1)%4)
		if err := s.Reconcile(); err != nil {
			t.Errorf("reconcile: %v", err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// hammer writes, reads, adds and watches keys of every shard until stop,
// returning the first answer that is neither served nor redirected.
func hammer(c *Cache, g int, stop <-chan struct{}) error {
	ok := func(err error) bool { return err == nil || errors.Is(err, engine.ErrNotLeader) }
	for i := 0; ; i++ {
		select {
		case <-stop:
			return nil
		default:
		}
		k := fmt.Appendf(nil, "g%d-%d", g, i%64)
		if _, err := c.Put(k, []byte("v"), PutOptions{}); !ok(err) {
			return fmt.Errorf("put: %w", err)
		}
		if _, err := c.Get(k, nil); !ok(err) {
			return fmt.Errorf("get: %w", err)
		}
		if _, err := c.CounterAdd(k, 1); !ok(err) {
			return fmt.Errorf("counter add: %w", err)
		}
		w, err := c.Watch(WatchOptions{Prefix: true, Shard: i % 4, Retained: true})
		if !ok(err) {
			return fmt.Errorf("watch: %w", err)
		}
		if w != nil {
			w.Close()
		}
		_ = c.Stats()
		if _, err := c.Compact(); !ok(err) {
			return fmt.Errorf("compact: %w", err)
		}
	}
}

// createAndDrop creates and drops another cache until stop.
func createAndDrop(s *Store, stop <-chan struct{}) error {
	id := ID{Tenant: "acme", Namespace: "app", Name: "churn"}
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		if _, err := s.Create(id, Config{Shards: 2, Durable: true}); err != nil {
			return fmt.Errorf("create: %w", err)
		}
		if err := s.Drop(id); err != nil {
			return fmt.Errorf("drop: %w", err)
		}
	}
}

// A store opened with a placement opens only the held shards of the
// caches in its catalog, and a volatile cache's shards live in memory the
// same way.
func TestOpenOpensOnlyTheHeldShards(t *testing.T) {
	mem := vfs.NewMem()
	p := newPlacement()
	p.hold(cid, 0, 1, 2, 3)
	s := placedStore(t, mem, p, nil)
	if _, err := s.Create(cid, Config{Shards: 4, Durable: true}); err != nil {
		t.Fatal(err)
	}
	c := mustCache(t, s)
	k2 := taggedKey(c, 2, "k")
	put(t, c, string(k2), "kept", PutOptions{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	p.hold(cid, 2)
	s = placedStore(t, mem, p, nil)
	c = mustCache(t, s)
	wantValue(t, c, string(k2), "kept", 0)
	wantNotLeaderEverywhere(t, c, taggedKey(c, 3, "k"), 3)

	vol := ID{Tenant: "acme", Namespace: "app", Name: "volatile"}
	p.hold(vol, 1)
	if _, err := s.Create(vol, Config{Shards: 2}); err != nil {
		t.Fatal(err)
	}
	if names, err := s.mem.List(cacheDir("/", vol)); err != nil || !slices.Equal(names, []string{"shard-0001"}) {
		t.Fatalf("volatile shard directories: %v, %v", names, err)
	}
	v := mustCacheID(t, s, vol)
	wantNotLeaderEverywhere(t, v, taggedKey(v, 0, "k"), 0)
	put(t, v, string(taggedKey(v, 1, "k")), "v", PutOptions{})
}

// A cache none of whose shards this broker holds is open here all the
// same (its operations redirect), has no directory, and drops cleanly.
func TestACacheWithNoShardHeldHereHasNoFiles(t *testing.T) {
	mem := vfs.NewMem()
	p := newPlacement()
	s := placedStore(t, mem, p, nil)
	if _, err := s.Create(cid, Config{Shards: 2, Durable: true}); err != nil {
		t.Fatal(err)
	}
	c := mustCache(t, s)
	wantDirs(t, mem, cid)
	wantNotLeaderEverywhere(t, c, taggedKey(c, 1, "k"), 1)
	if err := s.Drop(cid); err != nil {
		t.Fatalf("drop: %v", err)
	}
	if _, err := c.Get(taggedKey(c, 1, "k"), nil); !errors.Is(err, ErrCacheDropped) {
		t.Fatalf("get after drop: %v", err)
	}
}
