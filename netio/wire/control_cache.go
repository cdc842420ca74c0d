package wire

// CacheConfig is a cache's settings; zero takes the broker's default.
type CacheConfig struct {
	Shards            uint32 `json:"shards,omitempty"`
	ReplicationFactor uint32 `json:"replication_factor,omitempty"`
	Durable           bool   `json:"durable"`
	// Fsync is a durable cache's FsyncMode, as a stream's; absent takes
	// the broker's default.
	Fsync FsyncMode `json:"fsync,omitzero"`
	// Consistency is when a replicated cache's writes are acknowledged, as
	// a stream's publishes are: Leader (absent) or Quorum. A client sends
	// Quorum only once FeatureCacheConsistency is negotiated: a broker
	// without it would ignore the field.
	Consistency Consistency `json:"consistency,omitempty"`
}

func (c CacheConfig) check() error {
	return firstErr(checkEnum("fsync.mode", c.Fsync.Kind, FsyncNone, FsyncPeriodic, FsyncOnCommit),
		checkEnum("consistency", c.Consistency, ConsistencyLeader, ConsistencyQuorum))
}

// CacheCreate creates a cache; the answer is OK, or ERROR already_exists.
type CacheCreate struct {
	Cache  CacheRef    `json:"cache"`
	Config CacheConfig `json:"config"`
}

// CacheDrop deletes a cache and its counters; the answer is OK.
type CacheDrop struct {
	Cache CacheRef `json:"cache"`
}

// CacheWatch watches one key, or every key starting with Key when Prefix
// is set. The answer is WATCH_STARTED, then CACHE_WATCH_EVENT frames.
// ResumeOffset resumes after a previous watch: delivery starts at that
// offset with no gap and no duplicate. Retained (which needs
// FeatureCacheWatchRetained) delivers each matching key's current value
// first, marked as snapshot. Offsets are per shard, so a prefix watch reads
// the one shard Shard names (0 when absent): watching a prefix of a cache
// with several shards takes one watch per shard. A key watch reads its
// key's shard and ignores Shard.
type CacheWatch struct {
	Cache        CacheRef `json:"cache"`
	Key          []byte   `json:"key,omitempty"` // base64 in JSON
	Prefix       bool     `json:"prefix,omitempty"`
	Shard        uint32   `json:"shard,omitempty"`
	ResumeOffset *uint64  `json:"resume_offset,omitempty"`
	Retained     bool     `json:"retained,omitempty"`
}

// WatchStarted answers CACHE_WATCH. RetainedCount snapshot events come
// before any live one: the retained values, or, when Resnapshot is set, the
// current values that replace a resume offset compaction had collapsed (the
// client replaces its state with them). Zero is a definite zero. Live
// changes start at StartOffset. Shard is the shard the watch reads (a key
// watch's is its key's) and Shards the cache's number of shards, so a
// client can open one prefix watch per shard; both are omitted when 0.
type WatchStarted struct {
	WatchID       uint64 `json:"watch_id"`
	RetainedCount uint64 `json:"retained_count"`
	Resnapshot    bool   `json:"resnapshot,omitempty"`
	StartOffset   uint64 `json:"start_offset"`
	Shard         uint32 `json:"shard,omitempty"`
	Shards        uint32 `json:"shards,omitempty"`
}

// WatchEnded is pushed (request id 0) when the broker ends a watch:
// cache_watch_lagged with FirstMissedOffset to resume from, not_leader,
// not_found, shutting_down.
type WatchEnded struct {
	WatchID           uint64  `json:"watch_id"`
	Code              Code    `json:"code"`
	Message           string  `json:"message,omitempty"`
	FirstMissedOffset *uint64 `json:"first_missed_offset,omitempty"`
}

// CacheUnwatch ends a watch; the answer is OK.
type CacheUnwatch struct {
	WatchID uint64 `json:"watch_id"`
}

// RequiredFeatures is what a session needs to carry this watch: a
// retained watch needs FeatureCacheWatchRetained besides the frame's own.
func (m *CacheWatch) RequiredFeatures() Features {
	need := RequiredFeatures(TypeCacheWatch, 0)
	if m.Retained {
		need |= FeatureCacheWatchRetained
	}
	return need
}

func (*CacheCreate) FrameType() Type  { return TypeCacheCreate }
func (*CacheDrop) FrameType() Type    { return TypeCacheDrop }
func (*CacheWatch) FrameType() Type   { return TypeCacheWatch }
func (*WatchStarted) FrameType() Type { return TypeWatchStarted }
func (*WatchEnded) FrameType() Type   { return TypeWatchEnded }
func (*CacheUnwatch) FrameType() Type { return TypeCacheUnwatch }

func (m *CacheCreate) check(l Limits) error {
	return firstErr(l.CheckCacheRef(m.Cache), m.Config.check())
}
func (m *CacheDrop) check(l Limits) error { return l.CheckCacheRef(m.Cache) }
func (m *CacheWatch) check(l Limits) error {
	return firstErr(l.CheckCacheRef(m.Cache), l.CheckKey(m.Key))
}
func (*WatchStarted) check(Limits) error { return nil }
func (*WatchEnded) check(Limits) error   { return nil }
func (*CacheUnwatch) check(Limits) error { return nil }
