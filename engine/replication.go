package engine

import (
	"fmt"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment/vfs"
)

// Replication is the cluster's replication of a durable shard whose
// stream has a replication factor above 1: the engine opens the shard's
// local log as usual (its records made visible to nobody: OnVisible is
// the replication's), and hands it here. What comes back serves the shard
// from then on: appends go to the shard's leader on this broker (and are
// acknowledged at the stream's consistency level), reads see only what is
// committed, and OnCommit delivers records to the shard's subscribers once
// they are acknowledgeable. A stream of replication factor 1 never comes
// here: it is served as a broker alone serves it.
//
// Without a Replication (a broker alone) a stream with a replication
// factor above 1 is refused at its creation.
type Replication interface {
	Replicate(r ReplicaLog) (ReplicatedLog, error)
}

// ReplicaLog is one shard's local log, handed to the Replication.
type ReplicaLog struct {
	Stream StreamInfo
	Shard  int
	FS     vfs.FS
	Dir    string // the shard's directory: the replica's own state goes beside its segments
	Log    *shardlog.Log
	// OnCommit is where committed records go: the shard's subscribers.
	OnCommit func(first, next int64, records []byte)
	// LeadershipEnded ends the shard's live subscriptions with err (a
	// *NotLeaderError naming the new leader, if known): the replication
	// calls it when this broker stops leading the shard, whose records
	// then stop coming through here. The shard stays open; a broker
	// leading it again serves new subscriptions.
	LeadershipEnded func(err error)
}

// ReplicatedLog is what serves a replicated shard: the engine's log
// interface. Append refuses with *NotLeaderError while this broker does
// not lead the shard; Close closes the local log too.
type ReplicatedLog interface {
	Append(entries []shardlog.Entry, gen uint32, w shardlog.Waiter) (int64, error)
	Read(from int64, maxBytes int, dst []byte) ([]byte, int64, error)
	Start() int64
	End() int64
	Close() error
}

var _ logStore = ReplicatedLog(nil)

// checkReplication refuses a replication factor above 1 that this engine
// cannot serve: a broker alone holds one replica of each shard, and only a
// durable stream has logs to replicate.
func (e *Engine) checkReplication(cfg StreamConfig) error {
	switch {
	case cfg.ReplicationFactor <= 1:
		return nil
	case e.opts.Replication == nil:
		return fmt.Errorf("%w: replication factor %d: this broker runs alone and holds one replica of each shard; a replication factor above 1 needs a cluster of at least that many brokers",
			ErrInvalidConfig, cfg.ReplicationFactor)
	case !cfg.Durable:
		return fmt.Errorf("%w: replication factor %d: a stream that is not durable has no log to replicate (set durable, or a replication factor of 1)",
			ErrInvalidConfig, cfg.ReplicationFactor)
	}
	return nil
}
