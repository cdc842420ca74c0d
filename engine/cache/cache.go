package cache

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/felixbroker/felix/engine"
)

// Cache is an open cache: its catalog entry and its shards, of which this
// broker holds some (Options.Placement): only those have a log here. Every
// method is safe for concurrent use.
type Cache struct {
	store   *Store
	info    Info
	ownerID engine.StreamID
	// shards has one slot per shard of the cache, held or not, so a key
	// routes as on every broker; an operation loads its slot atomically
	// (placement.go).
	shards []shardSlot

	// mu serializes opening and closing the shards (Reconcile, stop), so
	// a slot changes under one writer; operations never take it.
	mu sync.Mutex
	// stopped, once set, is why the cache stopped (ErrClosed,
	// ErrCacheDropped): no shard of it opens again.
	stopped atomic.Pointer[errBox]
}

// Info is the cache's catalog entry.
func (c *Cache) Info() Info { return c.info }

// ID is the cache's name.
func (c *Cache) ID() ID { return c.info.ID }

// Shards is the number of shards.
func (c *Cache) Shards() int { return len(c.shards) }

// ShardFor is the shard a key lives on: engine.ShardFor, xxh3(key) mod
// shards, the same rule a keyed publish follows.
func (c *Cache) ShardFor(key []byte) int { return engine.ShardFor(key, len(c.shards)) }

// route checks the key and returns its shard and its fingerprint there.
func (c *Cache) route(key []byte) (*shard, fingerprint, error) {
	switch {
	case len(key) == 0:
		return nil, fingerprint{}, ErrEmptyKey
	case len(key) > c.store.opts.KeyBytesMax:
		return nil, fingerprint{}, fmt.Errorf("%w: %d bytes, at most %d", ErrKeyTooLarge, len(key), c.store.opts.KeyBytesMax)
	}
	h := keyHash(key)
	i := int(h % uint64(len(c.shards)))
	sh := c.shards[i].sh.Load()
	if sh == nil {
		return nil, fingerprint{}, c.absent(i)
	}
	return sh, sh.ix.fingerprint(h, key), nil
}

// owned asks the Ownership seam whether this broker leads the shard: every
// write does, before it touches anything.
func (c *Cache) owned(shard int) error {
	if local, leader := c.store.opts.Owner.Leader(c.ownerID, shard); !local {
		return &engine.NotLeaderError{Stream: c.ownerID, Shard: shard, Leader: leader}
	}
	return nil
}

func (c *Cache) nowNanos() int64 { return c.store.opts.Now().UnixNano() }

// Get returns the key's live value, appended to dst. A key never written,
// deleted or expired is the zero Item. It waits only when a write of the
// same key is in flight, for that write's commit.
func (c *Cache) Get(key, dst []byte) (Item, error) {
	c.store.ops.count(OpGet)
	sh, fp, err := c.route(key)
	if err != nil {
		return Item{}, err
	}
	it, err := sh.get(fp, key, dst)
	if it.Found {
		c.store.ops.hits.Add(1)
	}
	return it, err
}

// GetAsync is Get for a caller that must never wait for a Quorum commit
// (a connection's event loop, a worker shared by many connections): when
// the key's newest write is not yet committed at Quorum, the read is
// parked on rw (see ReadWait) and GetAsync returns wait true; rw's waiter
// is then told when to ask again (with the same rw: it keeps its
// deadline) or what the answer is. With rw nil it parks nothing and
// returns wait true: the caller asks again with a record of its own. A
// call that parks nothing (rw nil) is not counted among the gets, nor is
// one asked again after a park. On a cache that is not at Quorum it is
// Get, which may wait for one group commit of the shard's log (netio's
// gates keep that off its loops).
func (c *Cache) GetAsync(key, dst []byte, rw *ReadWait) (_ Item, wait bool, _ error) {
	retry := rw != nil && !rw.deadline.IsZero()
	sh, fp, err := c.route(key)
	if err != nil {
		c.countGet(retry, false)
		return Item{}, false, err
	}
	it, wait, err := sh.getAsync(fp, key, dst, rw)
	c.countGet(retry || wait && rw == nil, it.Found)
	return it, wait, err
}

// countGet counts a get (unless it was counted already, or is handed
// back to be asked again) and, when found, its hit.
func (c *Cache) countGet(counted, found bool) {
	if !counted {
		c.store.ops.count(OpGet)
	}
	if found {
		c.store.ops.hits.Add(1)
	}
}

// Put writes value under key, under opts' condition and expiry, and waits
// for the acknowledgement at the cache's FsyncMode.
func (c *Cache) Put(key, value []byte, opts PutOptions) (Written, error) {
	s := syncWrites.Get().(*syncWrite)
	defer syncWrites.Put(s)
	if err := c.PutAsync(key, value, opts, s); err != nil {
		return Written{}, err
	}
	<-s.ch
	return s.res, s.err
}

// PutAsync is Put without the wait: w is told the answer. It returns an
// error, and tells w nothing, when the write was refused before anything
// was appended: a failed condition (*PreconditionError), a shard this
// broker does not lead (*engine.NotLeaderError), a limit, a stopped shard.
// On a Quorum cache a failed condition whose answer must wait for writes
// before it to commit (it names the key's state as the index holds it) is
// parked instead, never waited for: w is told it (or no_quorum, or
// not_leader) once they commit (park.go). key and value are copied before
// it returns.
func (c *Cache) PutAsync(key, value []byte, opts PutOptions, w WriteWaiter) error {
	return c.putAsync(key, value, opts, w, 0)
}

// PutAsyncHere is PutAsync for a caller that answers on its own goroutine
// and would rather write the record itself than hand it to the shard's
// committer and have the answer handed back (a connection's event loop,
// answering one request of a socket read): when the log allows it (no
// fdatasync owed before the acknowledgement, under None and Periodic; the
// committer idle; at most maxBytes queued: see shardlog.Log.FlushHere),
// the record is written to the page cache before PutAsyncHere returns,
// and w is told on the caller's goroutine, before it returns. Otherwise
// it is PutAsync. The caller must hold nothing w takes.
func (c *Cache) PutAsyncHere(key, value []byte, opts PutOptions, w WriteWaiter, maxBytes int) error {
	return c.putAsync(key, value, opts, w, maxBytes)
}

// putAsync is PutAsync, flushing on the caller's goroutine when maxBytes
// is positive (PutAsyncHere).
func (c *Cache) putAsync(key, value []byte, opts PutOptions, w WriteWaiter, maxBytes int) error {
	c.store.ops.count(OpPut)
	sh, fp, err := c.route(key)
	if err != nil {
		return err
	}
	if len(value) > c.store.opts.ValueBytesMax {
		return fmt.Errorf("%w: %d bytes, at most %d", ErrValueTooLarge, len(value), c.store.opts.ValueBytesMax)
	}
	expiresAt, err := c.expiry(opts)
	if err != nil {
		return err
	}
	if err := c.owned(sh.index); err != nil {
		return err
	}
	if maxBytes <= 0 {
		return sh.put(fp, key, value, expiresAt, opts.Cond, w, true)
	}
	err = sh.put(fp, key, value, expiresAt, opts.Cond, w, false)
	sh.flushOrWake(maxBytes)
	return err
}

// expiry resolves a put's expiry to an absolute time (0: none).
func (c *Cache) expiry(opts PutOptions) (int64, error) {
	switch {
	case opts.TTL < 0 || opts.ExpiresAt < 0:
		return 0, fmt.Errorf("%w: negative", ErrInvalidExpiry)
	case opts.TTL > 0 && opts.ExpiresAt > 0:
		return 0, fmt.Errorf("%w: a TTL and an absolute expiry", ErrInvalidExpiry)
	case opts.TTL > 0:
		return c.nowNanos() + int64(opts.TTL), nil
	}
	return opts.ExpiresAt, nil
}

// Delete removes the key's value under cond (CondAlways or CondIfOffset)
// and waits for the acknowledgement. A key with no live value appends
// nothing and answers Existed false, Offset -1.
func (c *Cache) Delete(key []byte, cond Condition) (Written, error) {
	s := syncWrites.Get().(*syncWrite)
	defer syncWrites.Put(s)
	if err := c.DeleteAsync(key, cond, s); err != nil {
		return Written{}, err
	}
	<-s.ch
	return s.res, s.err
}

// DeleteAsync is Delete without the wait, as PutAsync is Put. When nothing
// is appended w is told before DeleteAsync returns, except on a Quorum
// cache with writes before it not yet committed: then that answer is
// parked until they are, as a refused condition's is.
func (c *Cache) DeleteAsync(key []byte, cond Condition, w WriteWaiter) error {
	return c.deleteAsync(key, cond, w, 0)
}

// DeleteAsyncHere is DeleteAsync as PutAsyncHere is PutAsync: the
// tombstone is written on the caller's goroutine, and w told there, when
// the log allows it.
func (c *Cache) DeleteAsyncHere(key []byte, cond Condition, w WriteWaiter, maxBytes int) error {
	return c.deleteAsync(key, cond, w, maxBytes)
}

func (c *Cache) deleteAsync(key []byte, cond Condition, w WriteWaiter, maxBytes int) error {
	c.store.ops.count(OpDelete)
	sh, fp, err := c.route(key)
	if err != nil {
		return err
	}
	if err := c.owned(sh.index); err != nil {
		return err
	}
	if maxBytes <= 0 {
		return sh.del(fp, key, cond, w, true)
	}
	err = sh.del(fp, key, cond, w, false)
	sh.flushOrWake(maxBytes)
	return err
}

// ShardStats is a shard's size and work, for metrics.
type ShardStats struct {
	Open             bool  // this broker holds the shard and its log is open (all else is zero otherwise)
	Keys             int   // index entries (expired ones included until compacted)
	End              int64 // one past the last acknowledged offset
	LogBytes         int64
	Segments         int
	CompactedThrough int64 // offsets below may have been compacted away
	Compactions      int64
	Watches          int
	Counters         int
}

// Stats returns a snapshot per shard, indexed by shard; a shard this
// broker has no log of is the zero ShardStats (Open false).
func (c *Cache) Stats() []ShardStats {
	out := make([]ShardStats, len(c.shards))
	for i := range c.shards {
		if sh := c.shards[i].sh.Load(); sh != nil {
			out[i] = sh.stats()
		}
	}
	return out
}

func (sh *shard) stats() ShardStats {
	ls := sh.log().Stats()
	sh.ixMu.RLock()
	keys := sh.ix.len()
	sh.ixMu.RUnlock()
	sh.watchMu.Lock()
	watches := len(sh.watches)
	sh.watchMu.Unlock()
	return ShardStats{Open: true, Keys: keys, End: ls.End, LogBytes: ls.Bytes, Segments: ls.Segments,
		CompactedThrough: sh.log().CompactedThrough(), Compactions: sh.compactions.Load(),
		Watches: watches, Counters: sh.counters.len()}
}

// stop stops every open shard with err (ErrClosed, ErrCacheDropped); none
// opens again. It waits for a shard being opened or closed (mu).
func (c *Cache) stop(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped.CompareAndSwap(nil, &errBox{err})
	var errs []error
	for i := range c.shards {
		if sh := c.shards[i].sh.Load(); sh != nil {
			errs = append(errs, sh.stop(err))
		}
	}
	return errors.Join(errs...)
}
