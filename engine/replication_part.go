package engine

import (
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment/vfs"
)

// The logs of a replicated shard beyond a stream's records, and how they
// replicate.
//
// A replicated shard (its object's replication factor above 1) may have
// several logs, its parts, each replicated on the shard's replica set at
// the shard's generation:
//
//	stream shard   part 0 records        (Replication.Replicate)
//	               part 1 group cursors  (PartReplication.HoldPart)
//	               part 2 dead letters   (PartReplication.HoldPart)
//	cache shard    part 0 values         (PartReplication.HoldPart)
//	               part 1 counters       (PartReplication.HoldPart)
//
// A part held through PartReplication is replicated at its
// PartLog.Consistency (a stream's group logs at the stream's, a cache's
// logs at the cache's): the package that owns the log (engine/group,
// engine/cache) opens it on every replica, appends to it directly while
// this broker leads the shard, at the generation Leading returns, and
// acknowledges a write once its own log has it at its FsyncMode and
// Part.Vouch then says so (at once at the Leader level; at Quorum once
// the part's quorum watermark passed it and the lease still holds); the
// replica ships every appended record to the followers behind it. A
// Quorum leadership first appends a generation-start record
// (segment.FlagGenerationStart with FlagControl, no key, no value) before
// Leading says it leads: the owner skips it as a control record. On a follower the replica appends
// the leader's records to the log (Log.AppendAt) and truncates it where a
// new leader's log differs (KIP-279), so the owner must not serve from it
// or append to it: it rebuilds what it keeps in memory from the log when
// this broker leads the shard again (Leading's generation changed).
//
// A cache shard's part 0 is the shard's primary log: its leases and its
// promotions are weighed on it, as a stream's are on its records.
const (
	PartRecords      = 0
	PartGroupCursors = 1
	PartDeadLetters  = 2
	PartCacheValues  = 0
	PartCounters     = 1
)

// PartReplication is the cluster's replication of a replicated shard's
// parts held by their owner package. Without one (a broker alone) an
// object of replication factor above 1 is refused at its creation.
type PartReplication interface {
	// HoldPart registers p.Log as part p.Part of the replicated shard. The
	// log stays the owner's: Release stops the replication of it and the
	// owner closes it after.
	HoldPart(p PartLog) (Part, error)
}

// PartLog is one part of a replicated shard, handed to HoldPart.
type PartLog struct {
	Cache bool     // the shard is a cache's; otherwise a stream's
	ID    StreamID // the stream's or the cache's tenant, namespace and name
	Shard int
	Part  int
	FS    vfs.FS
	Dir   string // the part's directory: the replica's own state goes beside the log's segments
	Log   *shardlog.Log
	// Consistency is the level the part's writes are acknowledged at
	// (ConsistencyLeader when empty); every part of a shard has its
	// primary's.
	Consistency Consistency
	// OnCommit, on a shard's primary only (a cache's values), receives the
	// records a leadership at gen committed at Quorum, in order, on the
	// replica's goroutine: what the owner's readers may see (the
	// equivalent of a stream's subscribers). It must not block.
	OnCommit func(gen uint32, first, next int64, records []byte)
}

// Part is a held part of a replicated shard.
type Part interface {
	// Leading reports whether this broker leads the shard now and at
	// which generation: the owner appends with that generation, and only
	// while ok. A leadership that ended (a newer generation fenced this
	// replica, its lease lapsed) answers false.
	Leading() (gen uint32, ok bool)
	// Appended tells the replica that records were appended: it ships
	// them without waiting for its next look at the log.
	Appended()
	// CompactBelow is the offset below which every follower holds the
	// log: a compaction of it must keep every record at or above it, so
	// that a follower is never sent a run of offsets with holes. A
	// follower's own replica answers 0 (nothing may be dropped by it).
	CompactBelow() int64
	// Vouch tells w (Committed(first, last, err)) once the records the
	// owner appended at gen up to last, which its own log has at its
	// FsyncMode, are acknowledged at the part's consistency: at the
	// Leader level at once; at Quorum once the part's quorum watermark
	// passed last and the lease of gen still holds, or with an error
	// carrying wire code no_quorum (no majority within the publish
	// timeout, or the leadership of gen ended: the write may be stored).
	// Vouched in offset order; w must not block.
	Vouch(gen uint32, first, last int64, w shardlog.Waiter)
	// Commit is the commit watermark of the leadership at gen (one past
	// the last record a failover cannot take back) and whether this
	// broker leads the part at gen (and its lease holds). At the Leader
	// level it is math.MaxInt64: only the owner's log's end bounds it.
	Commit(gen uint32) (int64, bool)
	// Release stops replicating the part. The log stays open. Releasing
	// a shard's primary (a cache's values) releases its other parts too:
	// release them first.
	Release()
}
