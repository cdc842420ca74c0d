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
// checker sees it. The seed that caught it must pass without it.
func TestAnInjectedBugFailsTheRun(t *testing.T) {
	for _, c := range []struct {
		name string
		bug  Bug
		want []check.Kind
	}{
		{"ack-before-quorum", BugAckBeforeQuorum, []check.Kind{check.LostWrite, check.Unseen, check.InconsistentOffsets}},
		{"read-past-commit", BugReadPastCommit, []check.Kind{check.RolledBackRead, check.AbortedRead, check.InconsistentOffsets}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for seed := uint64(1); seed <= bugSeedsMax; seed++ {
				cfg := ConfigOf(seed)
				cfg.Bug, cfg.Faults = c.bug, faultsMax // every seed's shards and the most faults
				for i := range cfg.Shards {
					cfg.Shards[i] = ShardConfig{Consistency: replica.ConsistencyQuorum, Fsync: shardlog.OnCommit()}
				}
				res := Run(t, cfg)
				if !res.Failed() {
					continue
				}
				for _, k := range c.want {
					for i, rep := range res.Reports {
						if rep.Count(k) > 0 && cfg.Shards[i].Lossless() {
							t.Logf("seed %d caught it: %s", seed, res.Violations[0])
							cfg.Bug = BugNone
							if honest := Run(t, cfg); honest.Failed() {
								t.Fatalf("seed %d fails without the bug too:\n%s", seed, honest.Report())
							}
							return
						}
					}
				}
				t.Fatalf("seed %d failed, but with none of %v:\n%s", seed, c.want, res.Report())
			}
			t.Fatalf("no seed of %d caught %s", bugSeedsMax, c.name)
		})
	}
}
