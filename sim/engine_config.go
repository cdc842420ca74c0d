package sim

import (
	"math/rand/v2"
	"time"

	"github.com/felixbroker/felix/cluster/replica"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
)

// drawEngine gives a third of the seeds the stream engine, from a draw of
// its own: the streams' settings and the caches of a seed are drawn as
// without it.
func drawEngine(seed uint64) bool {
	return rand.New(rand.NewPCG(seed, 0x656e67)).IntN(3) == 0
}

// streamID is the simulated stream's name in the engine: shard i is the
// cluster's shardID(i).
var streamID = engine.StreamID{Tenant: "sim", Namespace: "sim", Name: "s"}

// streamInfo is the stream's catalog entry, as a CreateStream would write
// it: durable, replicated on every broker, at the consistency and fsync
// of the run's shards (one setting for all in an engine run).
func streamInfo(c Config, created time.Time) engine.StreamInfo {
	s := c.Shards[0]
	cfg := engine.StreamConfig{Shards: len(c.Shards), Durable: true, ReplicationFactor: c.Brokers,
		Consistency: engine.ConsistencyLeader, Fsync: engine.FsyncSetting{Kind: "OnCommit"},
		Delivery: engine.DeliveryAtLeastOnce, Kind: engine.KindStream}
	if s.Consistency == replica.ConsistencyQuorum && c.Bug != BugStreamLeaderAcks {
		cfg.Consistency = engine.ConsistencyQuorum
	}
	if s.Fsync.Kind == shardlog.FsyncPeriodic {
		cfg.Fsync = engine.FsyncSetting{Kind: "Periodic", Interval: s.Fsync.Interval}
	}
	return engine.StreamInfo{ID: streamID, Config: cfg, Generation: 1, Created: created}
}
