package cache

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache/volatile"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment/vfs"
)

// Store is one broker's caches. Safe for concurrent use.
type Store struct {
	opts Options
	mem  *volatile.FS // the logs of caches that are not durable

	// changeMu serializes what changes the set of caches (Create, Drop,
	// Reconcile, Close), so two of them never open or remove the same
	// cache's files; it is held while shards open, mu only briefly.
	changeMu sync.Mutex
	mu       sync.RWMutex // guards caches and closed
	caches   map[ID]*Cache
	closed   bool

	stopCompactor chan struct{}
	compactorDone chan struct{}

	ops    opCounters
	values *valueCache   // nil when off
	opened atomic.Uint64 // shards opened: each one's number in values
}

// Open opens every cache in the catalog, recovering the logs of each
// durable shard Options.Placement says this broker holds and rebuilding
// its index; a shard that refuses to open (corruption) fails Open with an
// error naming it. Caches that are not durable come back empty (their
// catalog entries persist when the store has a directory).
func Open(opts Options) (*Store, error) {
	opts = opts.withDefaults()
	if opts.Catalog == nil {
		c, err := OpenFileCatalog(opts.FS, cachesDir(opts.Dir))
		if err != nil {
			return nil, err
		}
		opts.Catalog = c
	}
	s := &Store{opts: opts, mem: volatile.New(), caches: map[ID]*Cache{},
		stopCompactor: make(chan struct{}), compactorDone: make(chan struct{}),
		values: newValueCache(opts.ValueCacheBytes)}
	for _, info := range opts.Catalog.List() {
		c, err := s.openCache(info)
		if err != nil {
			close(s.compactorDone) // never started: Close must not wait for it
			s.Close()
			return nil, err
		}
		s.caches[info.ID] = c
	}
	go s.compactor()
	return s, nil
}

// Durable reports whether the store has a storage directory: durable caches
// and counters are offered only then.
func (s *Store) Durable() bool { return s.opts.FS != nil }

// Create creates a cache and opens the shards this broker holds.
func (s *Store) Create(id ID, cfg Config) (Info, error) {
	if err := id.Check(); err != nil {
		return Info{}, err
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Info{}, err
	}
	if cfg.Durable && !s.Durable() {
		return Info{}, ErrNoStorage
	}
	if err := s.checkReplication(cfg); err != nil {
		return Info{}, err
	}
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	if err := s.absent(id); err != nil {
		return Info{}, err
	}
	info := Info{ID: id, Config: cfg, Generation: 1, Created: s.opts.Now().UTC()}
	if err := s.opts.Catalog.Create(info); err != nil {
		return Info{}, err
	}
	c, err := s.openCache(info)
	if err != nil {
		return Info{}, s.undoCreate(info, err) // nospace.go
	}
	s.mu.Lock()
	s.caches[id] = c
	s.mu.Unlock()
	s.opts.Logger.Info("cache created", "cache", id.String(), "shards", cfg.Shards, "durable", cfg.Durable,
		"replication_factor", cfg.ReplicationFactor)
	return info, nil
}

// absent checks that the store is open and has no cache named id.
func (s *Store) absent(id ID) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	if _, ok := s.caches[id]; ok {
		return ErrCacheExists
	}
	return nil
}

// Drop ends the cache's watches, closes its shards and removes it, its
// values and its counters. A catalog that no longer has it (another
// broker dropped it first, through a shared catalog) does not keep it
// open here; a catalog that fails to delete it does, and Drop says why.
func (s *Store) Drop(id ID) error {
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	s.mu.RLock()
	c, ok := s.caches[id]
	s.mu.RUnlock()
	if !ok {
		return ErrCacheNotFound
	}
	if err := s.opts.Catalog.Delete(id); err != nil && !errors.Is(err, ErrCacheNotFound) {
		return err
	}
	return s.discard(c) // placement.go
}

// Cache returns an open cache, or ErrCacheNotFound.
func (s *Store) Cache(id ID) (*Cache, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	c, ok := s.caches[id]
	if !ok {
		return nil, ErrCacheNotFound
	}
	return c, nil
}

// List lists the caches of a tenant and namespace (all when empty).
func (s *Store) List(tenant, namespace string) []Info {
	var out []Info
	for _, info := range s.opts.Catalog.List() {
		if (tenant == "" || info.ID.Tenant == tenant) && (namespace == "" || info.ID.Namespace == namespace) {
			out = append(out, info)
		}
	}
	return out
}

// Close stops the compactor and every cache, syncing and closing the logs.
// It waits for a Create, Drop or Reconcile under way.
func (s *Store) Close() error {
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	caches := s.caches
	s.caches = map[ID]*Cache{}
	s.mu.Unlock()
	close(s.stopCompactor)
	<-s.compactorDone
	var errs []error
	for _, c := range caches {
		errs = append(errs, c.stop(ErrClosed))
	}
	return errors.Join(errs...)
}

// fsFor is where a cache's logs live: the data directory, or memory.
func (s *Store) fsFor(cfg Config) (vfs.FS, string) {
	if cfg.Durable {
		return s.opts.FS, s.opts.Dir
	}
	return s.mem, "/"
}

// openCache opens a cache with the shards this broker holds, for Open and
// Create: a shard that fails to open fails it whole.
func (s *Store) openCache(info Info) (*Cache, error) {
	c, err := s.newCache(info) // placement.go
	if err != nil {
		return nil, err
	}
	if err := c.reconcile(); err != nil {
		c.stop(ErrClosed)
		return nil, err
	}
	return c, nil
}

// openShard opens a shard's log and rebuilds its index, and opens its
// counters when it has any; a replicated shard's logs are held instead,
// both of them, and built once it leads (replicate.go).
func (s *Store) openShard(c *Cache, i int) (*shard, error) {
	sh := newShard(c, i)
	fs, root := s.fsFor(c.info.Config)
	l, err := s.openLog(c.info, fs, valuesDir(root, c.info.ID, i), sh.onVisible)
	if err != nil {
		return nil, err
	}
	sh.logs = shardlog.NewHealer(l, sh.takeLog, nil) // heal.go
	if c.replicated() {
		if err := s.holdShard(sh, fs, valuesDir(root, c.info.ID, i), l); err != nil {
			return nil, err
		}
		return sh, nil
	}
	began := time.Now()
	records, err := sh.rebuild()
	if err != nil {
		l.Close()
		return nil, err
	}
	sh.compactedBytes.Store(l.Stats().Bytes)
	if err := sh.counters.openIfPresent(); err != nil {
		l.Close()
		return nil, err
	}
	s.opts.Logger.Info("cache shard open", "cache", c.info.ID.String(), "shard", i, "records", records,
		"keys", sh.ix.len(), "rebuild", time.Since(began))
	return sh, nil
}

// holdShard holds a replicated shard's values log l and opens its
// counters log, held too; on an error both are let go of and closed.
func (s *Store) holdShard(sh *shard, fs vfs.FS, dir string, l *shardlog.Log) error {
	p, err := sh.c.hold(sh, engine.PartCacheValues, fs, dir, l)
	if err != nil {
		l.Close()
		return err
	}
	sh.valuesPart.Store(p)
	sh.compactedBytes.Store(l.Stats().Bytes)
	if err := sh.counters.openEager(); err != nil {
		p.release()
		l.Close()
		return err
	}
	s.opts.Logger.Info("cache shard open, replicated", "cache", sh.c.info.ID.String(), "shard", sh.index,
		"end", l.End(), "counters_end", sh.counters.end())
	return nil
}

func (s *Store) openLog(info Info, fs vfs.FS, dir string, onVisible func(int64, int64, []byte)) (*shardlog.Log, error) {
	mode := shardlog.None()
	if info.Config.Durable {
		var err error
		if mode, err = info.Config.Fsync.Mode(s.opts.Fsync); err != nil {
			return nil, err
		}
	}
	o := s.opts
	return shardlog.Open(shardlog.Options{
		FS: fs, Dir: dir, Fsync: mode,
		SegmentBytes: o.SegmentBytes, BufferBytes: o.BufferBytes, IndexIntervalBytes: o.IndexIntervalBytes,
		PrepareSegments: o.PrepareSegments && info.Config.Durable, TrustIndexes: o.TrustIndexes, FlushScheduler: o.FlushScheduler,
		OnVisible: onVisible, Logger: o.Logger.With("cache", info.ID.String()), Now: o.Now, // the log's lines name their dir
	})
}
