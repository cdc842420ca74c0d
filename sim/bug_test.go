package sim

import (
	"testing"

	"github.com/felixbroker/felix/check"
	"github.com/felixbroker/felix/cluster/replica"
	"github.com/felixbroker/felix/engine/shardlog"
)

// bugSeedsMax bounds the seeds an injected bug is given to show itself:
// each seed's run with its shards made Quorum OnCommit (where the bug is
// an anomaly) and the most faults.
const bugSeedsMax = 40

// An injected bug must make some run fail, with the kinds it causes: the
// simulator's faults reach the interleavings that expose it and the
// checker sees it. The seed that caught it must pass without it. The
// stream's bugs run without caches, as they did before caches were in;
// the simulator's own clients' without the engine (whose publish path and
// reads they bypass), the engine's with it in every seed.
func TestAnInjectedBugFailsTheRun(t *testing.T) {
	t.Run("ack-before-quorum", func(t *testing.T) {
		catchBug(t, BugAckBeforeQuorum, nil, check.LostWrite, check.Unseen, check.InconsistentOffsets)
	})
	t.Run("read-past-commit", func(t *testing.T) {
		catchBug(t, BugReadPastCommit, nil, check.RolledBackRead, check.AbortedRead, check.InconsistentOffsets)
	})
	t.Run("long-grant", func(t *testing.T) {
		// Its acks past 3L/4 of their heartbeat's send are late-ack in
		// most seeds; those sent once a promotion had begun are
		// ack-after-promotion too (1 seed of the first 40: most of a
		// stale leader's late acks precede its successor's promotion).
		catchBug(t, BugLongGrant, nil, check.AckAfterPromotion, check.LateAck)
	})
}

// The engine's bug, run with the stream through the engine in every seed.
// Skipped under -race, where it would cost a fifth of the package's time
// (make test runs it without -race; TestSimulation runs the engine under
// -race).
func TestAnInjectedEngineBugFailsTheRun(t *testing.T) {
	if raceEnabled {
		t.Skip("make test runs this without -race")
	}
	catchBug(t, BugStreamLeaderAcks, nil, check.LostWrite, check.Unseen, check.InconsistentOffsets, check.PollSkip,
		check.RolledBackRead)
}

// A cache bug, run with two Quorum OnCommit caches in every seed. Skipped
// under -race, where it would cost a third of the package's time (make
// test runs it without -race; TestSimulation runs caches under -race).
func TestAnInjectedCacheBugFailsTheRun(t *testing.T) {
	if raceEnabled {
		t.Skip("make test runs this without -race")
	}
	quorum := CacheConfig{Consistency: replica.ConsistencyQuorum, Fsync: shardlog.OnCommit()}
	catchBug(t, BugCacheLeaderAcks, []CacheConfig{quorum, quorum},
		check.CacheNonlinearizable, check.CounterNonlinearizable, check.CounterBounds)
}

// catchBug runs bug in seeds 1 to bugSeedsMax, with caches in each, until
// one fails with one of the kinds want on a shard or cache whose contract
// forbids it; that seed must then pass without the bug.
func catchBug(t *testing.T, bug Bug, caches []CacheConfig, want ...check.Kind) {
	for seed := uint64(1); seed <= bugSeedsMax; seed++ {
		cfg := ConfigOf(seed)
		cfg.Bug, cfg.Faults, cfg.Caches = bug, faultsMax, caches // every seed's shards and the most faults
		cfg.Engine = bug == BugStreamLeaderAcks                  // the others are the simulator's own stream clients'
		for i := range cfg.Shards {
			cfg.Shards[i] = ShardConfig{Consistency: replica.ConsistencyQuorum, Fsync: shardlog.OnCommit()}
		}
		res := Run(t, cfg)
		if !res.Failed() {
			continue
		}
		for _, k := range want {
			for _, rep := range append(res.Reports, res.CacheReports...) {
				if rep.Count(k) > 0 {
					t.Logf("seed %d caught it: %s", seed, res.Violations[0])
					cfg.Bug = BugNone
					if honest := Run(t, cfg); honest.Failed() {
						t.Fatalf("seed %d fails without the bug too:\n%s", seed, honest.Report())
					}
					return
				}
			}
		}
		t.Fatalf("seed %d failed, but with none of %v:\n%s", seed, want, res.Report())
	}
	t.Fatalf("no seed of %d caught bug %d", bugSeedsMax, bug)
}
