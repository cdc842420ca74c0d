package sim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/felixbroker/felix/cluster/replica"
	"github.com/felixbroker/felix/engine/shardlog"
)

// Config is one run's cluster and load, drawn from its seed (ConfigOf).
type Config struct {
	Seed     uint64
	Brokers  int           // 3
	Lease    time.Duration // L, the shard lease
	Duration time.Duration // fake time the workload and the faults run
	Shards   []ShardConfig
	// Caches are the replicated caches beside the stream (cache_config.go):
	// none in half the seeds.
	Caches []CacheConfig
	// Engine: each broker opens the real stream engine over its node, and
	// the stream's clients publish and subscribe through it
	// (engine_config.go): a third of the seeds. Its shards then share one
	// ShardConfig, the stream's (the engine's settings are a stream's).
	Engine bool
	// Faults is how many faults the run injects (spread over Duration).
	Faults int
	// Bug, when set, is a test-only defect the run injects (bug.go).
	Bug Bug
}

// ShardConfig is one shard's stream settings.
type ShardConfig struct {
	Consistency replica.Consistency
	Fsync       shardlog.FsyncMode
}

// Lossless reports whether the contract promises no acknowledged record is
// lost under this run's faults: Quorum with acknowledgements after the
// fsync. A Leader shard may lose what its leader had not shipped; a
// Periodic one what a power cut took before its fsync.
func (s ShardConfig) Lossless() bool {
	return s.Consistency == replica.ConsistencyQuorum && s.Fsync.Kind == shardlog.FsyncOnCommit
}

func (s ShardConfig) String() string {
	c := "leader"
	if s.Consistency == replica.ConsistencyQuorum {
		c = "quorum"
	}
	return c + "/" + s.Fsync.String()
}

const (
	shardsMax       = 3
	faultsMax       = 6
	durationDefault = 8 * time.Second
)

// ConfigOf draws a run's configuration from seed.
func ConfigOf(seed uint64) Config {
	rng := rand.New(rand.NewPCG(seed, 0x5151))
	c := Config{Seed: seed, Brokers: 3, Lease: time.Second, Duration: durationDefault, Faults: 1 + rng.IntN(faultsMax)}
	for range 1 + rng.IntN(shardsMax) {
		s := ShardConfig{Consistency: replica.ConsistencyQuorum, Fsync: shardlog.OnCommit()}
		if rng.IntN(4) == 0 {
			s.Consistency = replica.ConsistencyLeader
		}
		if rng.IntN(4) == 0 {
			s.Fsync = shardlog.Periodic(time.Duration(10+rng.IntN(90)) * time.Millisecond)
		}
		c.Shards = append(c.Shards, s)
	}
	c.Caches = drawCaches(seed)
	c.Engine = drawEngine(seed)
	if c.Engine {
		for i := range c.Shards {
			c.Shards[i] = c.Shards[0]
		}
	}
	return c
}

func (c Config) String() string {
	s := fmt.Sprintf("seed %d: %d brokers, lease %v, %v, shards %v, %d faults", c.Seed, c.Brokers, c.Lease, c.Duration, c.Shards, c.Faults)
	if len(c.Caches) > 0 {
		s += fmt.Sprintf(", caches %v", c.Caches)
	}
	if c.Engine {
		s += ", through the engine"
	}
	return s
}
