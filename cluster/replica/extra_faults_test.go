package replica

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment"
)

// Duplicated, reordered and delayed REPLICATEs and answers, on every
// link between the brokers, corrupt no log: each follower's log is a
// prefix of the leader's (the same records at the same offsets), every
// acknowledged record is on a majority, and every one survives the
// leader's loss.
func TestDuplicatedReorderedAndDelayedReplicationCorruptsNoLog(t *testing.T) {
	inCluster(t, abc, func(t *testing.T, c *testCluster) {
		sid := testShard(0)
		c.createShard(sid, ConsistencyQuorum, "a", "b", "c")
		for _, from := range abc {
			for _, to := range abc {
				if from != to {
					c.net.SetFaults(from, to, peer.Faults{Duplicate: 0.3, Reorder: 0.3, Delay: 3 * time.Millisecond})
				}
			}
		}
		var acked []ackedRecord
		refused := 0
		for i := range 50 { // one at a time
			v := fmt.Sprint("one-", i)
			if off, err := c.publish(sid, v); err == nil {
				acked = append(acked, ackedRecord{off, v})
			} else {
				refused++
			}
		}
		ld := c.brokers["a"].node.Leader(sid)
		for round := range 5 { // ten in flight at once: several batches in flight per follower
			var waits []waitChan
			var values []string
			for i := range 10 {
				v := fmt.Sprintf("many-%d-%d", round, i)
				w := make(waitChan, 1)
				if _, err := ld.Append([]shardlog.Entry{{Value: []byte(v), Timestamp: time.Now().UnixNano()}}, 0, w); err != nil {
					t.Fatal(err)
				}
				waits, values = append(waits, w), append(values, v)
			}
			for i, w := range waits {
				if r := <-w; r.err == nil {
					acked = append(acked, ackedRecord{r.first, values[i]})
				} else {
					refused++
				}
			}
		}
		t.Logf("%d acknowledged, %d refused", len(acked), refused)
		if len(acked) < 50 {
			t.Fatalf("only %d of 100 publishes acknowledged", len(acked))
		}
		time.Sleep(c.lease / 4)
		leader := c.logOf("a", sid)
		for _, id := range []string{"b", "c"} {
			log := c.logOf(id, sid)
			if len(log) > len(leader) {
				t.Fatalf("%s holds %d records, more than the leader's %d", id, len(log), len(leader))
			}
			for i, r := range log {
				if r != leader[i] {
					t.Fatalf("%s's record %d is %+v, the leader's %+v: not a prefix", id, i, r, leader[i])
				}
			}
		}
		for _, a := range acked {
			n := 0
			for _, id := range abc {
				if holds(c.logOf(id, sid), a) {
					n++
				}
			}
			if n < 2 {
				t.Fatalf("the acknowledged record %q at %d is on %d replicas, not a majority", a.value, a.offset, n)
			}
		}
		c.kill("a")
		next := c.awaitLeader(sid, "a", 4*c.lease)
		c.checkHeld(next, sid, acked)
	})
}

// A REPLICATE of the old leader's generation, arriving after a failover
// (delayed in the network, or sent by the old leader back from a pause),
// is answered Fenced by the new generation's follower and leader alike,
// and changes no log.
func TestAStaleGenerationReplicateIsRefused(t *testing.T) {
	inCluster(t, abc, func(t *testing.T, c *testCluster) {
		sid := testShard(0)
		c.createShard(sid, ConsistencyQuorum, "a", "b", "c")
		acked := c.publishAll(sid, "gen1", 3)
		c.kill("a")
		next := c.awaitLeader(sid, "a", 4*c.lease)
		gen := c.cp.assignment(sid).Generation
		acked = append(acked, c.publishAll(sid, "gen2", 2)...)
		c.restart("a") // it sends as the old leader would
		time.Sleep(c.lease / 4)
		for _, to := range []string{"b", "c"} {
			before := c.logOf(to, sid)
			end := c.brokers[to].logs[sid].End()
			recs := segment.AppendRecordParts(nil, end, 1, 0, time.Now().UnixNano(), nil, []byte("stale"))
			recs = segment.AppendRecordParts(recs, end+1, 1, 0, time.Now().UnixNano(), nil, []byte("stale too"))
			req := wire.AppendReplicate(nil, 0, wire.Replicate{Log: RefOf(sid), Generation: 1, First: end, PrevGen: 1, Commit: end + 2, Records: recs})
			ctx, cancel := context.WithTimeout(context.Background(), c.lease)
			answer, err := c.brokers["a"].tr.Call(ctx, to, req, nil)
			cancel()
			if err != nil {
				t.Fatalf("REPLICATE to %s: %v", to, err)
			}
			var ack wire.ReplicateAck
			if answer.Type != wire.TypeReplicateAck || ack.Decode(answer, wire.Limits{}) != nil {
				t.Fatalf("%s answered a stale REPLICATE with %v", to, answer.Type)
			}
			if ack.Status != wire.ReplicateFenced || ack.FenceGen != gen {
				t.Fatalf("%s answered a REPLICATE of generation 1 with %+v, want Fenced at %d", to, ack, gen)
			}
			time.Sleep(c.lease / 4)
			if after := c.logOf(to, sid); len(after) < len(before) || !equalRecords(after[:len(before)], before) {
				t.Fatalf("%s's log changed under a stale REPLICATE: %v, was %v", to, after, before)
			}
			for _, r := range c.logOf(to, sid) {
				if r.value == "stale" || r.value == "stale too" {
					t.Fatalf("%s appended the stale REPLICATE's record %+v", to, r)
				}
			}
		}
		if c.brokers[next].node.Leader(sid) == nil {
			t.Fatalf("%s stopped leading on a stale REPLICATE", next)
		}
		acked = append(acked, c.publishAll(sid, "after", 2)...)
		c.checkHeld(next, sid, acked)
	})
}

func equalRecords(a, b []logRecord) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A leader whose REPLICATEs no longer reach its followers (a one-way cut
// from it to them) is replaced although it still heartbeats the control
// plane: the followers' heartbeats say how long ago they last heard a
// REPLICATE of its generation (Follower.LeaderHeard), which is the
// direction from the leader to them.
func TestALeaderItsFollowersCannotHearIsReplaced(t *testing.T) {
	inCluster(t, abc, func(t *testing.T, c *testCluster) {
		sid := testShard(0)
		c.createShard(sid, ConsistencyQuorum, "a", "b", "c")
		acked := c.publishAll(sid, "before", 3)
		c.net.CutOneWay("a", "b")
		c.net.CutOneWay("a", "c")
		cut := time.Now()
		next := c.awaitLeader(sid, "a", 4*c.lease)
		t.Logf("replaced by %s %v after the cut", next, time.Since(cut))
		if next != "b" && next != "c" {
			t.Fatalf("replaced by %s", next)
		}
		acked = append(acked, c.publishAll(sid, "after", 2)...)
		c.checkHeld(next, sid, acked)
	})
}

// The other direction: the followers hear the leader's REPLICATEs, but
// their answers do not reach it, so it acknowledges nothing at Quorum.
// Their LeaderHeard stays fresh; the leader's own report (how long since
// a quorum of its followers answered it) is what gets it replaced.
func TestALeaderThatCannotHearItsFollowersIsReplaced(t *testing.T) {
	inCluster(t, abc, func(t *testing.T, c *testCluster) {
		sid := testShard(0)
		c.createShard(sid, ConsistencyQuorum, "a", "b", "c")
		acked := c.publishAll(sid, "before", 3)
		c.net.CutOneWay("b", "a")
		c.net.CutOneWay("c", "a")
		next := c.awaitLeader(sid, "a", 6*c.lease)
		if next != "b" && next != "c" {
			t.Fatalf("replaced by %s", next)
		}
		acked = append(acked, c.publishAll(sid, "after", 2)...)
		c.checkHeld(next, sid, acked)
	})
}
