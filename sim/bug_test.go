package sim

import (
	"testing"

	"github.com/felixbroker/felix/check"
)

// bugSeedsMax bounds the seeds an injected bug is given to show itself.
const bugSeedsMax = 40

// An injected bug must make some run fail, with the kinds it causes: the
// simulator's faults reach the interleavings that expose it and the
// checker sees it. Without it the same seeds pass (TestSimulation).
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
				cfg.Bug = c.bug
				res := Run(t, cfg)
				if !res.Failed() {
					continue
				}
				for _, k := range c.want {
					for i, rep := range res.Reports {
						if rep.Count(k) > 0 && cfg.Shards[i].Lossless() {
							t.Logf("seed %d caught it: %s", seed, res.Violations[0])
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
