package cache

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// Config is a cache's settings, as the catalog holds them.
type Config struct {
	Shards int `json:"shards"`
	// Durable keeps the cache's logs in the data directory; a cache that
	// is not durable keeps them in memory and loses them on exit.
	Durable bool `json:"durable"`
	// ReplicationFactor above 1 replicates each shard's logs on that many
	// brokers (replicate.go): a durable cache in a cluster only.
	ReplicationFactor int                 `json:"replication_factor"`
	Fsync             engine.FsyncSetting `json:"fsync"`
	// Consistency is when a replicated cache's writes are acknowledged
	// (replicate.go): Leader (the default) once its shard's leader has them
	// at its FsyncMode, Quorum once a majority of the replica set does and
	// the leader's lease still holds. A cache of one replica is at Leader
	// whatever it says.
	Consistency engine.Consistency `json:"consistency,omitempty"`
}

// Info is a cache as the catalog holds it.
type Info struct {
	ID         ID        `json:"id"`
	Config     Config    `json:"config"`
	Generation uint32    `json:"generation"` // leader epoch of every shard, single broker
	Created    time.Time `json:"created"`
}

func (c Config) withDefaults() (Config, error) {
	if c.Shards == 0 {
		c.Shards = 1
	}
	if c.ReplicationFactor == 0 {
		c.ReplicationFactor = 1
	}
	if c.Consistency == "" {
		c.Consistency = engine.ConsistencyLeader
	}
	switch {
	case c.Consistency != engine.ConsistencyLeader && c.Consistency != engine.ConsistencyQuorum:
		return c, fmt.Errorf("%w: consistency %q (Leader, Quorum)", ErrInvalidConfig, c.Consistency)
	case c.Shards < 1 || c.Shards > engine.ShardsMax:
		return c, fmt.Errorf("%w: shards %d not in 1..%d", ErrInvalidConfig, c.Shards, engine.ShardsMax)
	case c.ReplicationFactor < 1:
		return c, fmt.Errorf("%w: replication factor %d: at least 1", ErrInvalidConfig, c.ReplicationFactor)
	}
	if _, err := c.Fsync.Mode(shardlog.Periodic(0)); err != nil {
		return c, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	return c, nil
}

// Options configure a Store.
type Options struct {
	// FS and Dir hold durable caches and counters. With no Dir every cache
	// lives in memory and counters are not offered.
	FS  vfs.FS
	Dir string

	// Fsync is the FsyncMode of durable caches that do not set their own.
	Fsync shardlog.FsyncMode
	// Log tuning passed to every shard's logs.
	SegmentBytes       int64
	BufferBytes        int
	IndexIntervalBytes int
	PrepareSegments    bool
	TrustIndexes       bool
	// FlushScheduler, when set, group-commits the OnCommit flushes of
	// every durable cache shard's log with those of every other log
	// sharing it (shardlog.Options.FlushScheduler). nil: each log's
	// committer flushes alone.
	FlushScheduler *shardlog.FlushScheduler

	// ValueBytesMax bounds a value (the frame limit); KeyBytesMax a key.
	ValueBytesMax int
	KeyBytesMax   int

	// CompactEvery is how often the background compactor looks at each
	// shard (negative: never; tests call Compact). A shard is compacted
	// when its sealed segments hold CompactMinBytes more than the last
	// compaction left, and at least as much again.
	CompactEvery    time.Duration
	CompactMinBytes int64

	// ValueCacheBytes bounds the store's value cache (see valueCache):
	// values read lately, kept in memory so a get reads no log. 0 is
	// DefaultValueCacheBytes; negative turns it off.
	ValueCacheBytes int64

	// Watch queue bounds when WatchOptions leaves them zero, and the bound
	// on a snapshot's values (retained watch, resnapshot).
	WatchQueueEvents int
	WatchQueueBytes  int
	SnapshotBytesMax int

	Catalog Catalog          // default: a FileCatalog in Dir (in memory without one)
	Owner   engine.Ownership // default: engine.Alone
	// Placement says which shards of a cache this broker holds: only
	// those get a log here (default: engine.Alone, every shard). In a
	// cluster it follows the control plane; Store.Reconcile brings the
	// open shards in line with it.
	Placement engine.Placement
	// Replication replicates the shards of a cache whose replication
	// factor is above 1 (engine/replication_part.go); nil on a broker
	// alone, which refuses such a cache.
	Replication engine.PartReplication
	// QuorumTimeout bounds a read of a Quorum cache waiting for its key's
	// newest write to reach a majority (quorum.go): the publish timeout
	// in a cluster; 5 s when zero.
	QuorumTimeout time.Duration
	Logger        *slog.Logger
	Now           func() time.Time // the clock of TTLs and record timestamps
}

// Defaults.
const (
	DefaultValueBytesMax      = 4 << 20
	DefaultKeyBytesMax        = 4 << 10
	DefaultBufferBytes        = 1 << 20
	DefaultIndexIntervalBytes = 1 << 10
	DefaultCompactEvery       = 30 * time.Second
	DefaultCompactMinBytes    = 64 << 20
	DefaultWatchQueueEvents   = 10_000
	DefaultWatchQueueBytes    = 4 << 20
	DefaultSnapshotBytesMax   = 256 << 20
	DefaultValueCacheBytes    = 64 << 20
	DefaultQuorumTimeout      = 5 * time.Second
)

func (o Options) withDefaults() Options {
	if o.Dir == "" {
		o.FS = nil
	}
	if o.ValueBytesMax <= 0 {
		o.ValueBytesMax = DefaultValueBytesMax
	}
	if o.KeyBytesMax <= 0 || o.KeyBytesMax > segment.RecordKeyMax {
		o.KeyBytesMax = min(max(o.KeyBytesMax, DefaultKeyBytesMax), segment.RecordKeyMax)
	}
	if o.BufferBytes <= 0 {
		o.BufferBytes = DefaultBufferBytes
	}
	if o.IndexIntervalBytes <= 0 {
		o.IndexIntervalBytes = DefaultIndexIntervalBytes
	}
	if o.CompactEvery == 0 {
		o.CompactEvery = DefaultCompactEvery
	}
	if o.CompactMinBytes <= 0 {
		o.CompactMinBytes = DefaultCompactMinBytes
	}
	if o.WatchQueueEvents <= 0 {
		o.WatchQueueEvents = DefaultWatchQueueEvents
	}
	if o.WatchQueueBytes <= 0 {
		o.WatchQueueBytes = DefaultWatchQueueBytes
	}
	if o.ValueCacheBytes == 0 {
		o.ValueCacheBytes = DefaultValueCacheBytes
	}
	if o.SnapshotBytesMax <= 0 {
		o.SnapshotBytesMax = DefaultSnapshotBytesMax
	}
	if o.QuorumTimeout <= 0 {
		o.QuorumTimeout = DefaultQuorumTimeout
	}
	if o.Owner == nil {
		o.Owner = engine.Alone{}
	}
	if o.Placement == nil {
		o.Placement = engine.Alone{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}
