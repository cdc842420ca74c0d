package sim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/replica"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/engine/shardlog"
)

// CacheConfig is one replicated cache's settings: one shard, on every
// broker (replication factor 3), its values and counters replicated
// through the real cluster/replicated adapter and replica.Node.
type CacheConfig struct {
	Consistency replica.Consistency
	Fsync       shardlog.FsyncMode
}

// drawCaches gives a third of the seeds a cache, and a quarter of those a
// second one (a cache's two leaderships cost a run about what two stream
// shards do: make test's budget), from
// a draw of their own: the streams' settings of a seed are the same with
// or without them.
func drawCaches(seed uint64) []CacheConfig {
	rng := rand.New(rand.NewPCG(seed, 0x636163))
	if rng.IntN(3) != 0 {
		return nil
	}
	n := 1
	if rng.IntN(4) == 0 {
		n = 2
	}
	var out []CacheConfig
	for range n {
		c := CacheConfig{Consistency: replica.ConsistencyQuorum, Fsync: shardlog.OnCommit()}
		if rng.IntN(4) == 0 {
			c.Consistency = replica.ConsistencyLeader
		}
		if rng.IntN(4) == 0 {
			c.Fsync = shardlog.Periodic(time.Duration(10+rng.IntN(90)) * time.Millisecond)
		}
		out = append(out, c)
	}
	return out
}

// Lossless reports whether the contract promises a linearizable history
// under this run's faults: Quorum with acknowledgements after the fsync.
// At the Leader level a failover may take back what the leader had
// acknowledged and not shipped, and under Periodic a power cut what it
// had not synced: such a cache's anomalies are tolerated, not violations.
func (c CacheConfig) Lossless() bool {
	return c.Consistency == replica.ConsistencyQuorum && c.Fsync.Kind == shardlog.FsyncOnCommit
}

func (c CacheConfig) String() string {
	return "cache " + ShardConfig(c).String()
}

// class is the cache's consistency and fsync kind, without the interval.
func (c CacheConfig) class() string { return "cache " + shardClass(ShardConfig(c)) }

// cacheID is cache k's name.
func cacheID(k int) cache.ID {
	return cache.ID{Tenant: "sim", Namespace: "sim", Name: fmt.Sprintf("c%d", k)}
}

// cacheShardID is the cluster's name of cache k's one shard.
func cacheShardID(k int) cluster.ShardID {
	id := cacheID(k)
	return cluster.ShardID{Object: cluster.ObjectID{Kind: cluster.KindCache, Tenant: id.Tenant, Namespace: id.Namespace, Name: id.Name}}
}

// cacheInfo is cache k's catalog entry, as a Create would write it.
func cacheInfo(k int, c CacheConfig, created time.Time) cache.Info {
	cfg := cache.Config{Shards: 1, Durable: true, ReplicationFactor: 3, Consistency: engine.ConsistencyLeader,
		Fsync: engine.FsyncSetting{Kind: "OnCommit"}}
	if c.Consistency == replica.ConsistencyQuorum {
		cfg.Consistency = engine.ConsistencyQuorum
	}
	if c.Fsync.Kind == shardlog.FsyncPeriodic {
		cfg.Fsync = engine.FsyncSetting{Kind: "Periodic", Interval: c.Fsync.Interval}
	}
	return cache.Info{ID: cacheID(k), Config: cfg, Generation: 1, Created: created}
}
