package replica

import (
	"errors"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine/shardlog"
)

// The rule: a replica whose last stop may have lost its unsynced tail is
// not led again at a generation it held before; the control plane
// replaces it at a new one. Its followers hold records of that generation
// it lost, and leading there again would append other records at their
// offsets, under the same generation, where no truncation tells them
// apart: replicas diverging below the watermark (found by the simulator,
// sim seed 307: a Periodic leader power-cut and restarted before its
// lease ran out, which the store still named).
func TestALeaderRestartedAfterLosingItsTailDoesNotLeadItsGenerationAgain(t *testing.T) {
	inCluster(t, abc, func(t *testing.T, c *testCluster) {
		c.fsync = shardlog.Periodic(time.Hour)
		sid := testShard(0)
		c.createShard(sid, ConsistencyQuorum, "a", "b", "c")
		acked := c.publishAll(sid, "before", 5)
		c.kill("a") // a power cut: a loses every record, b and c hold them
		c.restart("a")
		stored := c.cp.assignment(sid)
		if stored.Leader.Broker != "a" || stored.Generation != 1 {
			t.Fatalf("the store moved on before a came back: %+v", stored)
		}
		_, err := c.brokers["a"].node.Lead(sid, 1, LeadOptions{Followers: []string{"b", "c"}, Consistency: ConsistencyQuorum,
			Timeout: c.timeout})
		if !errors.Is(err, ErrLostLeadership) {
			t.Fatalf("a led generation 1 again on the log it kept (%d records of %d): %v", c.brokers["a"].logs[sid].End(), len(acked)+1, err)
		}
		next := c.awaitLeader(sid, "a", 4*c.lease)
		c.checkHeld(next, sid, acked)
		if _, err := c.publish(sid, "after"); err != nil {
			t.Fatalf("publishing at %s: %v", next, err)
		}
	})
}

// An assignment applied twice (the broker's watch and a resync both
// naming it leader at one generation) leaves its leadership as it was:
// Lead returns the leadership it has, which still acknowledges. (Found by
// sim seed 181: the second Lead ended the first, and ending it revoked
// the lease both shared, so the shard's leader was granted its lease every
// heartbeat and acknowledged nothing, for good.)
func TestLeadingTwiceAtOneGenerationKeepsTheLeadership(t *testing.T) {
	inCluster(t, abc, func(t *testing.T, c *testCluster) {
		sid := testShard(0)
		c.createShard(sid, ConsistencyQuorum, "a", "b", "c")
		acked := c.publishAll(sid, "before", 3)
		a := c.brokers["a"].node
		first := a.Leader(sid)
		again, err := a.Lead(sid, 1, LeadOptions{Followers: []string{"b", "c"}, Consistency: ConsistencyQuorum, Timeout: c.timeout})
		if err != nil || again != first {
			t.Fatalf("leading again at generation 1: %p %v, want the leadership it has (%p)", again, err, first)
		}
		time.Sleep(2 * c.lease) // fake time: several heartbeats and grants
		if _, err := c.publishOn("a", sid, "after"); err != nil {
			t.Fatalf("publishing at a after it was named leader twice: %v", err)
		}
		c.checkHeld("a", sid, acked)
	})
}
