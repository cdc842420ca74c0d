package replica

import (
	"fmt"
	"testing"
	"time"
)

// awaitStarted waits (in fake time) until broker id leads sid with its
// generation start committed; it fails the test past within.
func (c *testCluster) awaitStarted(id string, within time.Duration) *Leader {
	c.t.Helper()
	sid := testShard(0)
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(c.lease / 20) {
		if b := c.brokers[id]; b.node != nil {
			if l := b.node.Leader(sid); l != nil && l.Started() {
				return l
			}
		}
	}
	c.t.Fatalf("%s did not lead %v with its start committed within %v", id, sid, within)
	return nil
}

// A leadership has Started once its generation start commits, and not
// before: a Quorum shard of two replicas whose leader is killed has its
// other replica promoted (one answer of two suffices), whose start cannot
// commit while the killed one is down, and whose commit meanwhile is what
// it learnt as a follower, which may lie below what its predecessor
// acknowledged. Once the killed broker is back the start commits, and
// the commit covers every acknowledged record.
func TestALeadershipHasStartedOnlyOnceItsGenerationStartCommits(t *testing.T) {
	inCluster(t, []string{"a", "b"}, func(t *testing.T, c *testCluster) {
		sid := testShard(0)
		c.createShard(sid, ConsistencyQuorum, "a", "b")
		c.awaitStarted("a", 10*c.lease)
		var end int64
		for i := range 5 {
			off, err := c.publish(sid, fmt.Sprint("v", i))
			if err != nil {
				t.Fatalf("publish %d: %v", i, err)
			}
			end = off + 1
		}
		c.kill("a")
		next := c.awaitLeader(sid, "a", 10*c.lease)
		l := c.brokers[next].node.Leader(sid)
		for range 3 { // three leases on, in fake time: its only follower is still down
			if l.Started() {
				t.Fatalf("%s has started at generation %d, commit %d, with its only follower down", next, l.Generation(), l.Commit())
			}
			time.Sleep(c.lease)
			if cur := c.brokers[next].node.Leader(sid); cur != nil {
				l = cur
			}
		}
		t.Logf("%s leads at generation %d, commit %d, its predecessor acknowledged up to %d", next, l.Generation(), l.Commit(), end)
		c.restart("a")
		leader := c.awaitLeader(sid, "", 10*c.lease)
		if started := c.awaitStarted(leader, 20*c.lease); started.Commit() < end+1 {
			t.Fatalf("%s started with its commit at %d, below the %d acknowledged and its start", leader, started.Commit(), end+1)
		}
	})
}
