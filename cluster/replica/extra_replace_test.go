package replica

import (
	"slices"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/engine/shardlog"
)

// awaitAssignment waits (in fake time) until sid's stored assignment
// satisfies ok, and returns it; it fails the test past within.
func (c *testCluster) awaitAssignment(sid cluster.ShardID, within time.Duration, what string, ok func(cluster.Assignment) bool) cluster.Assignment {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if a := c.cp.assignment(sid); ok(a) {
			return a
		}
		time.Sleep(c.lease / 20)
	}
	c.t.Fatalf("%v: not %s within %v: %v", sid, what, within, c.cp.assignment(sid))
	return cluster.Assignment{}
}

// awaitHeld waits (in fake time) until broker id's log of sid holds every
// record of acked.
func (c *testCluster) awaitHeld(id string, sid cluster.ShardID, acked []ackedRecord, within time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		log := c.logOf(id, sid)
		if !slices.ContainsFunc(acked, func(a ackedRecord) bool { return !holds(log, a) }) {
			return
		}
		time.Sleep(c.lease / 20)
	}
	c.checkHeld(id, sid, acked)
}

// servedBy reports whether a names replica r of broker id's current disk
// and has a leader.
func (c *testCluster) servedWith(id string) func(cluster.Assignment) bool {
	return func(a cluster.Assignment) bool {
		r := cluster.Replica{Broker: id, DiskID: c.brokers[id].disk}
		return a.Holds(r) && a.JoinedAt(r) == a.Generation && a.Leader != (cluster.Replica{})
	}
}

// A broker back on a new disk is replicated again: its old replica's place
// goes to the new disk at the next generation, the leader ships it the
// whole log, and once it holds the generation it joined at it counts as a
// replica with the data: the shard then survives its leader, which,
// without the new replica, would leave b alone (not enough answers).
func TestABrokerBackOnANewDiskIsReplicatedAgain(t *testing.T) {
	inCluster(t, abc, func(t *testing.T, c *testCluster) {
		sid := testShard(0)
		c.createShard(sid, ConsistencyQuorum, "a", "b", "c")
		acked := c.publishAll(sid, "before", 5)
		c.kill("c")
		acked = append(acked, c.publishAll(sid, "while-down", 3)...)
		c.restartOnAnotherDisk("c")
		a := c.awaitAssignment(sid, 4*c.lease, "served with c's new disk", c.servedWith("c"))
		if a.Generation != 2 || a.Leader.Broker != "a" {
			t.Fatalf("the replacement: %v, want generation 2 led by a again", a)
		}
		acked = append(acked, c.publishAll(sid, "after", 3)...)
		c.awaitHeld("c", sid, acked, 4*c.lease)
		c.kill("a")
		next := c.awaitLeader(sid, "a", 4*c.lease)
		c.checkHeld(next, sid, acked)
		if _, err := c.publish(sid, "on-the-new-leader"); err != nil {
			t.Fatalf("publishing on %s with a dead: %v", next, err)
		}
	})
}

// A record only the old disk held beside the leader is not lost to its
// replacement: a and c acknowledged records while b was cut off, then c
// came back on a new disk that gets nothing from a before a dies. The new
// replica's answer (it joined at generation 2 and holds nothing of it)
// does not count, so b, which lacks the records, is not promoted on it:
// the shard waits for a, and a, back, leads with every record.
func TestARecordTheOldDiskHeldIsNotLostToItsReplacement(t *testing.T) {
	inCluster(t, abc, func(t *testing.T, c *testCluster) {
		sid := testShard(0)
		c.createShard(sid, ConsistencyQuorum, "a", "c", "b")
		acked := c.publishAll(sid, "all", 3)
		c.net.Cut("a", "b")
		acked = append(acked, c.publishAll(sid, "a-and-c", 5)...)
		c.kill("c")
		c.net.Cut("a", "c")
		c.restartOnAnotherDisk("c")
		c.awaitAssignment(sid, 4*c.lease, "served with c's new disk", c.servedWith("c"))
		c.kill("a")
		deadline := time.Now().Add(4 * c.lease)
		for time.Now().Before(deadline) {
			if l := c.leader(sid); l != "" && l != "a" {
				t.Fatalf("%s was promoted on the answers of b (behind) and c (joined, empty): %v", l, c.cp.assignment(sid))
			}
			time.Sleep(c.lease / 10)
		}
		c.net.Heal("a", "b")
		c.net.Heal("a", "c")
		c.restart("a")
		next := c.awaitLeader(sid, "", 4*c.lease)
		c.checkHeld(next, sid, acked)
		c.awaitHeld("c", sid, acked, 4*c.lease)
	})
}

// A part's record only the old disk held beside the leader is not lost
// when the new disk's replica leads the part: a and c acknowledged x on a
// Quorum part while b was cut off; c came back on a new disk, caught up
// with the shard's records (so it counts for them and is promoted when a
// dies) but holds none of the part. Its own log of the part, below the
// generation it joined at, does not count in the part's adoption: it
// leads the part only once a (with x) answered, not on b's answer alone.
func TestAPartRecordTheOldDiskHeldIsNotLostToItsReplacement(t *testing.T) {
	inCluster(t, abc, func(t *testing.T, c *testCluster) {
		sid := testShard(0)
		c.createShard(sid, ConsistencyQuorum, "a", "c", "b")
		logs := map[string]*shardlog.Log{}
		for _, id := range abc {
			logs[id] = c.holdPart(id, sid, auxPart)
		}
		if _, err := c.publish(sid, "r0"); err != nil {
			t.Fatal(err)
		}
		c.net.Cut("a", "b")
		if err := c.appendPartQuorum("a", sid, logs["a"], "x"); err != nil {
			t.Fatalf("a Quorum part's write with c up: %v", err)
		}
		c.kill("c")
		c.restartOnAnotherDisk("c") // holding the shard's records, not the part yet
		c.awaitAssignment(sid, 4*c.lease, "served with c's new disk", c.servedWith("c"))
		deadline := time.Now().Add(4 * c.lease)
		for !slices.ContainsFunc(c.logOf("c", sid), func(r logRecord) bool { return r.gen == 2 }) {
			if time.Now().After(deadline) {
				t.Fatalf("c's new disk never reached generation 2: %v", c.logOf("c", sid))
			}
			time.Sleep(c.lease / 20)
		}
		c.kill("a")
		if next := c.awaitLeader(sid, "a", 4*c.lease); next != "c" {
			t.Fatalf("%s was promoted, want c (the highest generation)", next)
		}
		logs["c"] = c.holdPart("c", sid, auxPart)
		for deadline := time.Now().Add(3 * c.lease); time.Now().Before(deadline); time.Sleep(c.lease / 20) {
			if c.brokers["c"].node.PartLeader(sid, auxPart) != nil && !slices.Contains(partValues(t, logs["c"]), "x") {
				t.Fatalf("c leads the part without x, on b's answer and its own empty log: %q", partValues(t, logs["c"]))
			}
		}
		c.net.Heal("a", "b")
		c.restart("a")
		c.holdPart("a", sid, auxPart)
		c.awaitPart("c's part once a answered", logs["c"], []string{"x"})
	})
}
