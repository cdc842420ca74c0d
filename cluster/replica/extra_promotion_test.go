package replica

import (
	"slices"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/engine/shardlog"
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

// Double failover: a leads at generation 1 and dies; b is promoted at 2
// and dies before it replicates anything (it is cut from c, and a is
// dead); a comes back, and the leader promoted at 3 (not b) holds every
// record acknowledged. b, back too, drops its generation-2 start record
// (KIP-279) and follows.
func TestADoubleFailoverKeepsEveryAcknowledgedRecord(t *testing.T) {
	inCluster(t, abc, func(t *testing.T, c *testCluster) {
		sid := testShard(0)
		c.createShard(sid, ConsistencyQuorum, "a", "b", "c")
		acked := c.publishAll(sid, "gen1", 5)
		c.net.Cut("b", "c")
		c.kill("a")
		second := c.awaitLeader(sid, "a", 4*c.lease)
		if g := c.cp.assignment(sid).Generation; g != 2 {
			t.Fatalf("the first promotion named generation %d, want 2", g)
		}
		other := map[string]string{"b": "c", "c": "b"}[second]
		c.kill(second)
		for _, r := range c.logOf(other, sid) {
			if r.gen == 2 {
				t.Fatalf("%s holds %+v: %s replicated before it died", other, r, second)
			}
		}
		c.net.Heal("b", "c")
		c.restart("a")
		third := c.awaitLeader(sid, second, 4*c.lease)
		if g := c.cp.assignment(sid).Generation; g != 3 {
			t.Fatalf("the second promotion named generation %d, want 3", g)
		}
		c.checkHeld(third, sid, acked)
		acked = append(acked, c.publishAll(sid, "gen3", 2)...)
		c.restart(second)
		time.Sleep(c.lease)
		leader := c.logOf(third, sid)
		for _, id := range abc {
			log := c.logOf(id, sid)
			if len(log) > len(leader) || !equalRecords(log, leader[:len(log)]) {
				t.Fatalf("%s's log %v is not a prefix of the leader %s's %v", id, log, third, leader)
			}
		}
		c.checkHeld(second, sid, acked)
	})
}

// The last replica standing with a lost unsynced tail is not promoted
// over a longer log. Under Periodic fsync a Quorum acknowledgement means
// a majority holds the record, not that one fsynced it. c loses its
// power (and so its unsynced tail, all of it here); a, the leader, loses
// it too; both come back shorter (and unclean: their answers do not count
// until every replica has answered). b, which never stopped and holds
// every record, is promoted, though c comes first in the replica order.
func TestAReplicaThatLostItsUnsyncedTailIsNotPromotedOverALongerLog(t *testing.T) {
	inCluster(t, abc, func(t *testing.T, c *testCluster) {
		c.fsync = shardlog.Periodic(time.Hour)
		sid := testShard(0)
		c.createShard(sid, ConsistencyQuorum, "a", "c", "b") // c before b: preferred on a tie
		acked := c.publishAll(sid, "unsynced", 5)
		for !holds(c.logOf("b", sid), acked[len(acked)-1]) { // b has every record (well before any sync)
			time.Sleep(time.Millisecond)
		}
		before := len(c.logOf("c", sid))
		c.kill("c") // a power cut: what c never fsynced is gone
		c.kill("a")
		c.restart("c")
		c.restart("a")
		if after := len(c.logOf("c", sid)); after >= before {
			t.Fatalf("c kept %d of its %d records through the crash: nothing was lost, the test shows nothing", after, before)
		}
		next := c.awaitLeader(sid, "a", 4*c.lease)
		if next != "b" {
			t.Fatalf("%s was promoted over b, the longer log (c lost its tail)", next)
		}
		c.checkHeld("b", sid, acked)
		time.Sleep(c.lease)
		c.checkHeld("c", sid, acked) // caught up from b
	})
}

// stopProcess stops broker id as a process crash (kill -9) does: its disk
// keeps what it was written, synced or not (the page cache survives). The
// MemFS has no such crash: the logs are closed, which writes them out.
func (c *testCluster) stopProcess(id string) { c.stopBroker(c.brokers[id]) }

// The rule: a replica that lost its tail in an unclean stop is not
// counted as holding what it never fsynced. Under Periodic fsync, the
// last records are acknowledged by a and c (b is frozen). c loses its
// power, and with it those records; a's process dies (its page cache
// keeps them). Neither b (which never had them) nor c (which lost them)
// can vouch for them, so their two answers must not be enough: the shard
// waits for a, and once a is back every acknowledged record is on the
// new leader.
func TestAReplicaThatLostItsTailIsNotCountedAsHoldingIt(t *testing.T) {
	inCluster(t, abc, func(t *testing.T, c *testCluster) {
		c.fsync = shardlog.Periodic(time.Hour)
		sid := testShard(0)
		c.createShard(sid, ConsistencyQuorum, "a", "b", "c")
		acked := c.publishAll(sid, "all", 3)
		c.net.Freeze("b")
		acked = append(acked, c.publishAll(sid, "a-and-c", 3)...)
		c.kill("c")        // a power cut: c loses what it never fsynced
		c.stopProcess("a") // a process crash: a's disk keeps everything
		c.net.Thaw("b")
		c.restart("c")
		deadline := time.Now().Add(4 * c.lease)
		for time.Now().Before(deadline) {
			if l := c.leader(sid); l != "" && l != "a" {
				t.Fatalf("%s was promoted on the answers of b (without the last records) and c (which lost them)", l)
			}
			time.Sleep(c.lease / 10)
		}
		c.restart("a")
		next := c.awaitLeader(sid, "", 4*c.lease)
		c.checkHeld(next, sid, acked)
	})
}
