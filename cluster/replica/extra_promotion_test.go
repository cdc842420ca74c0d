package replica

import (
	"slices"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster"
)

// A replaced disk answering a fence does not count: c acknowledged
// records with a while b was cut off, then lost its disk and came back on
// an empty one that kept its id (its fence answers say NewDisk). With a
// dead, the answers of b (without the records) and c (with nothing) are
// not enough: counted, c's would let b be promoted without what a and c
// acknowledged. The shard waits, unavailable, until a is back, and then
// a replica with the data leads, never c.
func TestAReplacedDiskAnsweringAFenceDoesNotCount(t *testing.T) {
	inCluster(t, abc, func(t *testing.T, c *testCluster) {
		sid := testShard(0)
		c.createShard(sid, ConsistencyQuorum, "a", "c", "b") // c before b: preferred on a tie
		acked := c.publishAll(sid, "all", 3)
		c.net.Cut("a", "b")
		acked = append(acked, c.publishAll(sid, "a-and-c", 5)...) // a and c: a majority without b
		c.kill("c")
		c.net.Cut("a", "c") // the new disk gets nothing from a before a dies
		c.restartOnNewDisk("c")
		c.kill("a")
		deadline := time.Now().Add(4 * c.lease)
		for time.Now().Before(deadline) {
			if l := c.leader(sid); l != "" && l != "a" {
				t.Fatalf("%s was promoted on the answers of b (behind) and c (a new disk): %v", l, c.cp.assignment(sid))
			}
			time.Sleep(c.lease / 10)
		}
		c.net.Heal("a", "b")
		c.net.Heal("a", "c")
		c.restart("a")
		next := c.awaitLeader(sid, "", 4*c.lease)
		if a := c.cp.assignment(sid); a.Generation < 2 {
			t.Fatalf("no promotion happened: %v", a)
		}
		if next == "c" {
			t.Fatalf("the replica on a new disk was promoted")
		}
		c.checkHeld(next, sid, acked)
		var writes []cluster.StoredAssignment
		c.cp.do(func() { writes = slices.Clone(c.cp.writes) })
		for _, w := range writes {
			if w.Assignment.Leader.Broker == "c" {
				t.Fatalf("c, on a new disk, was named leader: %v", w)
			}
		}
	})
}
