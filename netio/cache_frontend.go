package netio

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/netio/wire"
)

// cacheFrontend is the server's side of its cache store: the caches the
// frames name, resolved once into handles; each shard's read gate; and the
// workers that run what must not run on a loop. One per Server with
// Config.Caches; the store must take its writes through this server only
// (another writer would not pass the gates, and a loop's get could then
// wait for its commit).
type cacheFrontend struct {
	s     *Server
	store *cache.Store

	// handles maps a cache ref's wire bytes to its handle, one per open
	// cache. Loops read it with one atomic load; a change copies it,
	// under mu (a new cache named, a handle gone stale).
	handles atomic.Pointer[map[string]*cacheHandle]
	mu      sync.Mutex

	jobs    chan *cacheJob
	workers atomic.Int32 // running worker goroutines
	idle    atomic.Int32 // workers waiting for a job
	// parked counts the jobs of Quorum caches that may park on their
	// shards for a commit (cache_jobs.go: reserve), at most
	// cacheParkedMax; parkedBy, under parkMu (a leaf), counts them per
	// connection, at most cacheParkedPerConnMax each (an entry goes at
	// zero).
	parked   atomic.Int32
	parkMu   sync.Mutex
	parkedBy map[*conn]int32
}

// cacheHandle is an open cache as the frames name it: its id, the id its
// shards' ownership is asked under, the principal's resource, and one gate
// per shard.
type cacheHandle struct {
	id    cache.ID
	owner engine.StreamID
	res   Resource // what the principal is asked about
	c     *cache.Cache
	gates []shardGate
	// quorum: the cache is replicated at Quorum, so its reads may be
	// parked for a commit (cache_jobs.go).
	quorum bool
	// stale: the cache was dropped (by this server, or seen answering
	// ErrCacheDropped); the next frame naming it resolves it again.
	stale atomic.Bool
}

// shardGate keeps a get on an event loop from ever waiting. A get waits
// only when the index names a write of its key that is appended and not
// yet visible; writes counts the writes of the shard in that state. A get
// runs on the loop only holding mu shared and seeing writes at zero, and a
// writer counts itself in holding mu exclusively, so no write can start
// while such a get reads; otherwise the get goes to a worker. A writer
// holds mu only to count itself (it never appends under it), so a loop
// waits on it for no longer than another loop's get. A gate cannot see a
// Quorum cache's write refused no_quorum (it left the gate, and its record
// stays uncommitted in the index): a get of its key is told so by the
// store (cache.GetAsync's wait), never waited for, and goes to a worker,
// which parks it (cache_jobs.go).
type shardGate struct {
	mu     sync.RWMutex
	writes atomic.Int64
	_      [64 - 24 - 8]byte // one cache line per gate: loops read them all the time
}

// enterWrite counts a write in; the caller must leave it once the write is
// visible (acknowledged) or was refused before it was appended.
func (g *shardGate) enterWrite() {
	g.mu.Lock()
	g.writes.Add(1)
	g.mu.Unlock()
}

func (g *shardGate) leaveWrite() { g.writes.Add(-1) }

// beginRead reports whether no write of the shard is in flight; when it
// is so, every new write is held back until endRead, so a get in between
// cannot wait.
func (g *shardGate) beginRead() bool {
	g.mu.RLock()
	if g.writes.Load() != 0 {
		g.mu.RUnlock()
		return false
	}
	return true
}

func (g *shardGate) endRead() { g.mu.RUnlock() }

func newCacheFrontend(s *Server) *cacheFrontend {
	if s.cfg.Caches == nil {
		return nil
	}
	fe := &cacheFrontend{s: s, store: s.cfg.Caches, jobs: make(chan *cacheJob, cacheJobsMax), parkedBy: map[*conn]int32{}}
	fe.handles.Store(&map[string]*cacheHandle{})
	return fe
}

// refKeyBytesMax is the longest a ref's key can be: three names of at most
// 255 bytes, each with its length.
const refKeyBytesMax = 3 * 256

// refKey appends the ref's names, each after its length: the handle
// table's key, unique per ref.
func refKey(dst []byte, ref wire.CacheRef) []byte {
	for _, name := range [...][]byte{ref.Tenant, ref.Namespace, ref.Cache} {
		dst = append(dst, byte(len(name)))
		dst = append(dst, name...)
	}
	return dst
}

// handle resolves a ref to its open cache: on the hot path one atomic
// load and a map lookup, with no lock. A cache dropped (and perhaps
// created again) since its handle was made gets a new handle: a drop
// through this server marks its handle stale at once, one elsewhere when
// an operation on it answers ErrCacheDropped (see redo).
func (fe *cacheFrontend) handle(ref wire.CacheRef) (*cacheHandle, error) {
	var buf [refKeyBytesMax]byte
	key := refKey(buf[:0], ref)
	if h := (*fe.handles.Load())[string(key)]; h != nil && !h.stale.Load() {
		return h, nil
	}
	return fe.resolve(key, ref)
}

// resolve looks the cache up in the store and makes its handle, under mu,
// so two loops never make two handles (and two sets of gates) for one
// cache.
func (fe *cacheFrontend) resolve(key []byte, ref wire.CacheRef) (*cacheHandle, error) {
	id := cache.ID{Tenant: string(ref.Tenant), Namespace: string(ref.Namespace), Name: string(ref.Cache)}
	if err := id.Check(); err != nil {
		return nil, err
	}
	fe.mu.Lock()
	defer fe.mu.Unlock()
	c, err := fe.store.Cache(id)
	if err != nil {
		fe.replace(string(key), nil)
		return nil, err
	}
	if h := (*fe.handles.Load())[string(key)]; h != nil && h.c == c && !h.stale.Load() {
		return h, nil
	}
	cfg := c.Info().Config
	h := &cacheHandle{id: id, owner: id.OwnershipID(), res: cacheResource(id), c: c, gates: make([]shardGate, c.Shards()),
		quorum: cfg.ReplicationFactor > 1 && cfg.Consistency == engine.ConsistencyQuorum}
	fe.replace(string(key), h)
	return h, nil
}

// replace publishes a copy of the table with key's handle replaced (nil:
// removed); mu held.
func (fe *cacheFrontend) replace(key string, h *cacheHandle) {
	old := *fe.handles.Load()
	if _, ok := old[key]; !ok && h == nil {
		return
	}
	next := make(map[string]*cacheHandle, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	if h == nil {
		delete(next, key)
	} else {
		next[key] = h
	}
	fe.handles.Store(&next)
}

// handleOf is handle for a cache named by its id.
func (fe *cacheFrontend) handleOf(id cache.ID) (*cacheHandle, error) {
	return fe.handle(wire.CacheRef{Tenant: []byte(id.Tenant), Namespace: []byte(id.Namespace), Cache: []byte(id.Name)})
}

// forget marks the handle of a cache this server dropped stale.
func (fe *cacheFrontend) forget(id cache.ID) {
	var buf [refKeyBytesMax]byte
	key := refKey(buf[:0], wire.CacheRef{Tenant: []byte(id.Tenant), Namespace: []byte(id.Namespace), Cache: []byte(id.Name)})
	fe.mu.Lock()
	defer fe.mu.Unlock()
	if h := (*fe.handles.Load())[string(key)]; h != nil {
		h.stale.Store(true)
	}
	fe.replace(string(key), nil)
}

// redo reports whether an operation that failed with err should be done
// again with a fresh handle: its cache was dropped (the handle is marked
// stale), and a cache of the same name exists now.
func (fe *cacheFrontend) redo(h *cacheHandle, err error) bool {
	if !errors.Is(err, cache.ErrCacheDropped) {
		return false
	}
	h.stale.Store(true)
	c, err := fe.store.Cache(h.id)
	return err == nil && c != h.c
}

// leads reports whether this broker leads the cache's shard, as a
// *engine.NotLeaderError when it does not: a read this broker cannot route
// is an error, never a miss. (Writes are asked by the store itself.)
func (fe *cacheFrontend) leads(h *cacheHandle, shard int) error {
	if local, leader := fe.s.cfg.Owner.Leader(h.owner, shard); !local {
		return &engine.NotLeaderError{Stream: h.owner, Shard: shard, Leader: leader}
	}
	return nil
}
