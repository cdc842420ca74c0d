package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment/vfs"
)

// Options configure an Engine.
type Options struct {
	// FS and Dir hold durable streams. With no Dir the engine keeps only
	// streams that are not durable, and its catalog in memory.
	FS  vfs.FS
	Dir string

	// Fsync is the FsyncMode of streams that do not set their own.
	Fsync shardlog.FsyncMode
	// Retention applies to streams whose own retention is zero.
	Retention shardlog.Retention
	// Log tuning passed to every shard's log.
	SegmentBytes    int64
	BufferBytes     int
	PrepareSegments bool
	TrustIndexes    bool
	// FlushScheduler, when set, group-commits the OnCommit flushes of
	// every durable shard's log with those of every other log sharing it
	// (the broker's caches' too): shardlog.Options.FlushScheduler. nil:
	// each log's committer flushes alone.
	FlushScheduler *shardlog.FlushScheduler

	// MemoryShardBytes bounds the in-memory log of a shard of a stream
	// that is not durable.
	MemoryShardBytes int

	// Observer is given to every durable shard's log: flush and sync
	// timings, for metrics. nil for none.
	Observer shardlog.Observer

	Catalog Catalog   // default: a FileCatalog in Dir
	Owner   Ownership // default: Alone
	// Placement says which shards this broker holds, and so opens: Open,
	// CreateStream and Reconcile open a log only for a shard it Holds.
	// Default: Alone (every shard).
	Placement Placement
	// Forward sends the parts of a publish bound for shards another broker
	// leads (Stream.PublishFrom); nil refuses them with *NotLeaderError.
	Forward Forwarder
	// Replication serves the durable shards of streams whose replication
	// factor is above 1 (replication.go); nil refuses such streams.
	Replication Replication
	Logger      *slog.Logger
	Now         func() time.Time
}

// DefaultMemoryShardBytes is the in-memory log bound of a non-durable shard.
const DefaultMemoryShardBytes = 16 << 20

// Engine is one broker's data: streams, their shards and logs, and the
// subscriptions reading them. Safe for concurrent use.
type Engine struct {
	opts      Options
	owner     Ownership
	placement Placement

	// layout serializes the changes to what is open (CreateStream,
	// DeleteStream, Reconcile, Close) across their IO, so two never open,
	// close or remove the same shard's files at once. Taken before mu;
	// never by a publish, a read or a subscription.
	layout sync.Mutex

	mu      sync.RWMutex // guards streams and closed
	streams map[StreamID]*Stream
	closed  bool
}

// Open opens every stream in the catalog, recovering the log of each
// durable shard this broker holds (Options.Placement); a shard that
// refuses to open (corruption its recovery found) fails Open with an error
// naming it. Damage in a sealed segment, which the log
// finds after it opened, takes only that shard offline (shard_offline.go).
func Open(opts Options) (*Engine, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MemoryShardBytes <= 0 {
		opts.MemoryShardBytes = DefaultMemoryShardBytes
	}
	if opts.Owner == nil {
		opts.Owner = Alone{}
	}
	if opts.Placement == nil {
		opts.Placement = Alone{}
	}
	if opts.Catalog == nil {
		var fs vfs.FS
		if opts.Dir != "" {
			fs = opts.FS
		}
		c, err := OpenFileCatalog(fs, opts.Dir)
		if err != nil {
			return nil, err
		}
		opts.Catalog = c
	}
	e := &Engine{opts: opts, owner: opts.Owner, placement: opts.Placement, streams: map[StreamID]*Stream{}}
	for _, info := range opts.Catalog.List() {
		s, err := e.openStream(info)
		if err != nil {
			e.Close()
			return nil, err
		}
		e.streams[info.ID] = s
	}
	return e, nil
}

// Owner is the Ownership the engine asks before every leader-only
// operation; packages built on the engine (groups, producers) ask it too.
func (e *Engine) Owner() Ownership { return e.owner }

// FS is the file system seam durable shards live on (nil without storage).
func (e *Engine) FS() vfs.FS { return e.opts.FS }

// Durable reports whether the engine has a storage directory.
func (e *Engine) Durable() bool { return e.opts.Dir != "" && e.opts.FS != nil }

// CreateStream creates a stream and opens the shards this broker holds.
func (e *Engine) CreateStream(id StreamID, cfg StreamConfig) (StreamInfo, error) {
	if err := id.Check(); err != nil {
		return StreamInfo{}, err
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return StreamInfo{}, err
	}
	if cfg.Durable && !e.Durable() {
		return StreamInfo{}, ErrNoStorage
	}
	if err := e.checkReplication(cfg); err != nil {
		return StreamInfo{}, err
	}
	e.layout.Lock()
	defer e.layout.Unlock()
	e.mu.RLock()
	closed, exists := e.closed, e.streams[id] != nil
	e.mu.RUnlock()
	switch {
	case closed:
		return StreamInfo{}, ErrClosed
	case exists:
		return StreamInfo{}, ErrStreamExists
	}
	info := StreamInfo{ID: id, Config: cfg, Generation: 1, Created: e.opts.Now().UTC()}
	if err := e.opts.Catalog.Create(info); err != nil {
		return StreamInfo{}, noSpace(err)
	}
	s, err := e.openStream(info)
	if err != nil {
		return StreamInfo{}, e.undoCreate(info, err) // nospace.go
	}
	e.install(s)
	e.opts.Logger.Info("stream created", "stream", id.String(), "shards", cfg.Shards, "durable", cfg.Durable)
	return info, nil
}

// DeleteStream removes the stream from the catalog, ends its
// subscriptions, closes its shards and removes it from the disk. A stream
// another broker already took out of the catalog (Catalog.Delete answers
// ErrStreamNotFound) while it is still open here is stopped and removed
// all the same: nothing of it is left half open. When the catalog refuses
// the delete otherwise, the stream stays open and the error is returned.
func (e *Engine) DeleteStream(id StreamID) error {
	e.layout.Lock()
	defer e.layout.Unlock()
	s := e.lookup(id)
	if s == nil {
		return ErrStreamNotFound
	}
	if err := e.opts.Catalog.Delete(id); err != nil && !errors.Is(err, ErrStreamNotFound) {
		return err
	}
	err := e.dropStream(s)
	e.opts.Logger.Info("stream deleted", "stream", id.String())
	return err
}

// lookup is the open stream id names, nil when none, closed or not.
func (e *Engine) lookup(id StreamID) *Stream {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.streams[id]
}

// install puts an opened stream in the table. Engine.layout is held, so
// the engine cannot have closed since the caller looked.
func (e *Engine) install(s *Stream) {
	e.mu.Lock()
	e.streams[s.info.ID] = s
	e.mu.Unlock()
}

// dropStream takes s out of the table, ends its subscriptions with
// ErrStreamDeleted, closes its shards and removes its directory (the data
// of the shards not held here too). Engine.layout is held; mu is not,
// while the shards' attachments close.
func (e *Engine) dropStream(s *Stream) error {
	e.mu.Lock()
	if e.streams[s.info.ID] == s {
		delete(e.streams, s.info.ID)
	}
	e.mu.Unlock()
	errs := []error{s.stopAll(ErrStreamDeleted)}
	if s.info.Config.Durable {
		errs = append(errs, vfs.RemoveAll(e.opts.FS, streamDir(e.opts.Dir, s.info.ID)))
		e.retakeReserve() // nospace.go
	}
	return errors.Join(errs...)
}

// Stream returns an open stream, or ErrStreamNotFound.
func (e *Engine) Stream(id StreamID) (*Stream, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, ErrClosed
	}
	s, ok := e.streams[id]
	if !ok {
		return nil, ErrStreamNotFound
	}
	return s, nil
}

// Streams lists the streams of a tenant and namespace (all when empty).
func (e *Engine) Streams(tenant, namespace string) []StreamInfo {
	var out []StreamInfo
	for _, info := range e.opts.Catalog.List() {
		if (tenant == "" || info.ID.Tenant == tenant) && (namespace == "" || info.ID.Namespace == namespace) {
			out = append(out, info)
		}
	}
	return out
}

// Close stops every stream, syncing and closing the logs. It waits for a
// Reconcile, CreateStream or DeleteStream in progress.
func (e *Engine) Close() error {
	e.layout.Lock()
	defer e.layout.Unlock()
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	streams := e.streams
	e.streams = map[StreamID]*Stream{}
	e.mu.Unlock()
	var errs []error
	for _, s := range streams {
		errs = append(errs, s.stopAll(ErrClosed))
	}
	return errors.Join(errs...)
}

// checkShards refuses a catalog entry whose shard count routing cannot
// use (one written by another catalog than CreateStream's, which checks).
func checkShards(info StreamInfo) error {
	if n := info.Config.Shards; n < 1 || n > ShardsMax {
		return fmt.Errorf("%w: %s has %d shards, not 1..%d", ErrInvalidConfig, info.ID, n, ShardsMax)
	}
	return nil
}

// newStream is a catalog entry with no shard open yet.
func (e *Engine) newStream(info StreamInfo) *Stream {
	return &Stream{engine: e, info: info, slots: make([]atomic.Pointer[Shard], info.Config.Shards)}
}

// openStream opens the shards of a catalog entry this broker holds, all
// or none: the first that fails to open closes the others and is returned.
func (e *Engine) openStream(info StreamInfo) (*Stream, error) {
	if err := checkShards(info); err != nil {
		return nil, err
	}
	s := e.newStream(info)
	for i := range s.slots {
		if !e.placement.Holds(info.ID, i) {
			continue
		}
		sh, err := e.openShard(s, i)
		if err != nil {
			s.stopAll(ErrClosed)
			return nil, err
		}
		s.slots[i].Store(sh)
	}
	return s, nil
}

// openShard opens the log of shard i of s, which is not open. The caller
// stores it in its slot.
func (e *Engine) openShard(s *Stream, i int) (*Shard, error) {
	sh := &Shard{stream: s, index: i, subs: map[*Subscription]struct{}{}}
	if s.info.Config.Durable {
		sh.dir = shardDir(e.opts.Dir, s.info.ID, i)
	}
	log, err := e.openLog(s.info, sh)
	if err != nil {
		return nil, fmt.Errorf("felix/engine: opening %s shard %d: %w", s.info.ID, i, err)
	}
	sh.log = log
	return sh, nil
}

// openLog opens the log of shard sh: records made visible go to
// sh.onVisible, and damage found after the open takes sh offline
// (shard_offline.go).
func (e *Engine) openLog(info StreamInfo, sh *Shard) (logStore, error) {
	cfg, shard := info.Config, sh.index
	if !cfg.Durable {
		return newMemLog(e.opts.MemoryShardBytes, func() int64 { return e.opts.Now().UnixNano() }, sh.onVisible), nil
	}
	if !e.Durable() {
		return nil, ErrNoStorage
	}
	mode, err := cfg.Fsync.Mode(e.opts.Fsync)
	if err != nil {
		return nil, err
	}
	ret := cfg.Retention
	if ret.MaxAge == 0 {
		ret.MaxAge = e.opts.Retention.MaxAge
	}
	if ret.MaxBytes == 0 {
		ret.MaxBytes = e.opts.Retention.MaxBytes
	}
	logger := e.opts.Logger.With("stream", info.ID.String(), "shard", shard)
	replicated := cfg.ReplicationFactor > 1 && e.opts.Replication != nil
	onVisible := sh.onVisible
	if replicated {
		onVisible = nil // the replication hands records on once committed
	}
	dir := shardDir(e.opts.Dir, info.ID, shard)
	l, err := shardlog.Open(shardlog.Options{
		FS: e.opts.FS, Dir: dir, Fsync: mode,
		SegmentBytes: e.opts.SegmentBytes, BufferBytes: e.opts.BufferBytes,
		PrepareSegments: e.opts.PrepareSegments, TrustIndexes: e.opts.TrustIndexes, FlushScheduler: e.opts.FlushScheduler,
		Retention: ret, OnVisible: onVisible, OnOffline: sh.goOffline, Observer: e.opts.Observer,
		Logger: logger, Now: e.opts.Now,
	})
	if err != nil {
		return nil, err
	}
	if replicated {
		rl, err := e.opts.Replication.Replicate(ReplicaLog{Stream: info, Shard: shard, FS: e.opts.FS, Dir: dir, Log: l, OnCommit: sh.onVisible,
			LeadershipEnded: sh.endSubscriptions})
		if err != nil {
			return nil, errors.Join(err, l.Close())
		}
		sh.local = l
		return rl, nil
	}
	return newDiskLog(sh, l, logger), nil // disklog.go: reopened once space is back
}
