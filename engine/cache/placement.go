package cache

import (
	"errors"
	"fmt"
	"maps"
	"sync/atomic"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/segment/vfs"
)

// A cache's shards are placed on brokers (Options.Placement, asked under
// ID.OwnershipID): this broker opens a log only for the shards it holds,
// and every operation on another answers *engine.NotLeaderError naming
// the leader Options.Owner knows. Placement and the catalog change under
// a cluster's control plane; Store.Reconcile follows them.

// shardSlot is one shard's place in its cache. sh is the open shard, nil
// where this broker has no log of it: it does not hold it, or opening it
// failed (failed says why; a later Reconcile retries). Operations load sh
// atomically and take no lock; Cache.mu serializes the writers.
type shardSlot struct {
	sh     atomic.Pointer[shard]
	failed atomic.Pointer[errBox]
}

// errBox holds an error for an atomic.Pointer.
type errBox struct{ err error }

// absent is why shard i has no log here, for an operation on it: the
// cache stopped, the shard failed to open, or (most often) this broker
// does not hold it and the leader Owner names serves it.
func (c *Cache) absent(i int) error {
	if b := c.stopped.Load(); b != nil {
		return b.err
	}
	if b := c.shards[i].failed.Load(); b != nil {
		return b.err
	}
	return c.notLeader(i)
}

// notLeader is the redirect for shard i: its leader as Owner knows it.
func (c *Cache) notLeader(i int) *engine.NotLeaderError {
	_, leader := c.store.opts.Owner.Leader(c.ownerID, i)
	return &engine.NotLeaderError{Stream: c.ownerID, Shard: i, Leader: leader}
}

// released reports whether err is the stop of a shard this broker no
// longer holds: its in-flight operations and watches are told who leads
// it, as a later operation would be.
func released(err error) bool {
	_, ok := err.(*engine.NotLeaderError)
	return ok
}

// newCache is an open cache with no shard open yet.
func (s *Store) newCache(info Info) (*Cache, error) {
	if info.Config.Durable && !s.Durable() {
		return nil, fmt.Errorf("felix/cache: opening %s: %w", info.ID, ErrNoStorage)
	}
	if err := s.checkReplication(info.Config); err != nil {
		return nil, fmt.Errorf("felix/cache: opening %s: %w", info.ID, err)
	}
	return &Cache{store: s, info: info, ownerID: info.ID.OwnershipID(),
		shards: make([]shardSlot, info.Config.Shards)}, nil
}

// reconcile opens each shard Placement says this broker holds and it has
// not open, and closes each open one it no longer holds, keeping its files
// (it may come back). A shard that fails to open is named in the error
// (errors.Join) and left for the next call; the others are reconciled.
// Nothing opens once the cache stopped.
func (c *Cache) reconcile() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped.Load() != nil {
		return nil
	}
	var errs []error
	for i := range c.shards {
		held := c.store.opts.Placement.Holds(c.ownerID, i)
		sh := c.shards[i].sh.Load()
		switch {
		case held && sh == nil:
			errs = append(errs, c.openSlot(i))
		case held:
			sh.poke() // a replicated shard follows its leadership (replicate.go)
		case !held && sh != nil:
			errs = append(errs, c.release(i, sh))
		case !held:
			c.shards[i].failed.Store(nil) // not ours to retry any more
		}
	}
	return errors.Join(errs...)
}

// openSlot opens shard i into its slot, or records why it did not; mu held.
func (c *Cache) openSlot(i int) error {
	sh, err := c.store.openShard(c, i)
	if err != nil {
		err = fmt.Errorf("felix/cache: opening %s shard %d: %w", c.info.ID, i, err)
		c.shards[i].failed.Store(&errBox{err})
		return err
	}
	c.shards[i].failed.Store(nil)
	c.shards[i].sh.Store(sh)
	return nil
}

// release closes shard i, which this broker no longer holds: new
// operations find its slot empty first, then the shard stops with the
// redirect its in-flight operations and watches are told. Its files stay.
// mu held.
func (c *Cache) release(i int, sh *shard) error {
	c.shards[i].sh.Store(nil)
	nle := c.notLeader(i)
	err := sh.stop(nle)
	c.store.opts.Logger.Info("cache shard closed: this broker no longer holds it", "cache", c.info.ID.String(),
		"shard", i, "leader", nle.Leader)
	if err != nil {
		return fmt.Errorf("felix/cache: closing %s shard %d: %w", c.info.ID, i, err)
	}
	return nil
}

// held is the open shard i, or nil.
func (c *Cache) held(i int) *shard { return c.shards[i].sh.Load() }

// Reconcile brings the open caches and shards in line with Options.Catalog
// and Options.Placement, which a cluster's control plane changes: a cache
// in the catalog and not open here is opened (its held shards); a held
// shard not open is opened; an open shard no longer held is closed (its
// watches end with *engine.NotLeaderError), its files kept; a cache open
// here and gone from the catalog, or replaced there by one created anew
// under its name, is stopped with ErrCacheDropped and its files removed,
// as Drop does. A shard that fails to open is named in the error
// (errors.Join) while the rest are reconciled; a later Reconcile retries
// it, and meanwhile its operations answer that error.
func (s *Store) Reconcile() error {
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	s.mu.RLock()
	closed, open := s.closed, maps.Clone(s.caches)
	s.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	list := s.opts.Catalog.List()
	listed := make(map[ID]Info, len(list))
	for _, info := range list {
		listed[info.ID] = info
	}
	var errs []error
	for id, c := range open {
		if info, ok := listed[id]; !ok || !c.sameCache(info) {
			errs = append(errs, s.discard(c))
			delete(open, id)
		}
	}
	for _, info := range list {
		if c, ok := open[info.ID]; ok {
			errs = append(errs, c.reconcile())
		} else {
			errs = append(errs, s.adopt(info))
		}
	}
	return errors.Join(errs...)
}

// sameCache reports whether info, the catalog's entry under the cache's
// name, is the cache open here rather than one created anew after a drop
// (whose files this broker's must not be mistaken for). Created tells
// them apart; the generation is a leader epoch and may move.
func (c *Cache) sameCache(info Info) bool {
	return c.info.Created.Equal(info.Created) && c.info.Config.Shards == info.Config.Shards &&
		c.info.Config.Durable == info.Config.Durable
}

// adopt opens a cache the catalog holds and this store has not open, with
// the shards it holds. Unlike Create it keeps the cache when a shard fails
// to open: the others serve, and the next Reconcile retries that one.
// changeMu held.
func (s *Store) adopt(info Info) error {
	c, err := s.newCache(info)
	if err != nil {
		return err
	}
	err = c.reconcile()
	s.mu.Lock()
	s.caches[info.ID] = c
	s.mu.Unlock()
	s.opts.Logger.Info("cache opened from the catalog", "cache", info.ID.String(), "shards", info.Config.Shards,
		"durable", info.Config.Durable)
	return err
}

// discard takes an open cache out of the store, stops it with
// ErrCacheDropped and removes its files, every shard's (held or not), then
// has the catalog take back a reserve a drop on a full disk gave up. Its
// catalog entry is gone already. changeMu held.
func (s *Store) discard(c *Cache) error {
	id := c.info.ID
	s.mu.Lock()
	if s.caches[id] == c {
		delete(s.caches, id)
	}
	s.mu.Unlock()
	errs := []error{c.stop(ErrCacheDropped)}
	fs, root := s.fsFor(c.info.Config)
	errs = append(errs, removeDir(fs, cacheDir(root, id)))
	s.retakeReserve() // nospace.go
	s.opts.Logger.Info("cache dropped", "cache", id.String())
	return errors.Join(errs...)
}

// removeDir removes dir and everything under it. A dir that does not exist
// is not an error: a cache whose shards this broker never held has none.
func removeDir(fs vfs.FS, dir string) error {
	if _, err := fs.List(dir); errors.Is(err, vfs.ErrNotExist) {
		return nil
	}
	return vfs.RemoveAll(fs, dir)
}
