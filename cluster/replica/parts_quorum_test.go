package replica

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
)

// A secondary part of a Quorum shard (a Quorum stream's group logs, a
// Quorum cache's counters) acknowledges its owner's writes at Quorum: the
// owner appends, its log has the record at its FsyncMode, and the part's
// leadership vouches for it (Leader.Vouch) once a majority holds it.

// appendPartQuorum appends value to id's part log as appendPart does, then
// asks the leadership to vouch for it, and returns that answer.
func (c *testCluster) appendPartQuorum(id string, sid cluster.ShardID, l *shardlog.Log, value string) error {
	ld := c.brokers[id].node.PartLeader(sid, auxPart)
	for deadline := time.Now().Add(c.lease / 2); ld == nil && time.Now().Before(deadline); {
		time.Sleep(c.lease / 40)
		ld = c.brokers[id].node.PartLeader(sid, auxPart)
	}
	if ld == nil || !ld.Serving(time.Now()) {
		return ErrNotLeader
	}
	w := make(waitChan, 1)
	first, err := l.Append([]shardlog.Entry{{Value: []byte(value), Timestamp: time.Now().UnixNano()}}, ld.Generation(), w)
	if err != nil {
		return err
	}
	ld.Appended()
	if r := <-w; r.err != nil {
		return r.err
	}
	ld.Vouch(first, first, w)
	return (<-w).err
}

func TestAQuorumPartWriteWithoutAMajorityIsRefused(t *testing.T) {
	inCluster(t, abc, func(t *testing.T, c *testCluster) {
		sid := testShard(0)
		c.createShard(sid, ConsistencyQuorum, "a", "b", "c")
		logs := map[string]*shardlog.Log{}
		for _, id := range abc {
			logs[id] = c.holdPart(id, sid, auxPart)
		}
		if _, err := c.publish(sid, "r0"); err != nil {
			t.Fatal(err)
		}
		if err := c.appendPartQuorum("a", sid, logs["a"], "acked"); err != nil {
			t.Fatalf("a Quorum part's write with every follower up: %v", err)
		}
		c.net.Cut("a", "b")
		c.net.Cut("a", "c")
		began := time.Now()
		err := c.appendPartQuorum("a", sid, logs["a"], "alone")
		if !errors.Is(err, wire.CodeNoQuorum) {
			t.Fatalf("a Quorum part's write with both followers cut off: %v, want no_quorum", err)
		}
		if waited := time.Since(began); waited < c.timeout {
			t.Errorf("refused after %v, before the publish timeout %v", waited, c.timeout)
		}
		if got := partValues(t, logs["a"]); !slices.Equal(got, []string{"acked", "alone"}) {
			t.Errorf("the leader's part holds %q: the refused write stays (its outcome is unknown)", got)
		}
	})
}

// #527's interleaving on a part: the leader's write is acknowledged at
// Quorum with one follower (b) holding it, and the leader dies right
// after, before it ships anything else; the other follower (c), which
// never got it, is the one promoted (its records log ties with b's, and
// ties go to the earliest replica of the assignment). The record must be
// on the new leader's part: it leads the part only once it heard enough
// replicas that every Quorum-acknowledged record is among them, and took
// the longest tail.
func TestAQuorumAcknowledgedPartRecordSurvivesItsLeader(t *testing.T) {
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
		c.awaitPart("c's part", logs["c"], nil)
		c.net.Cut("a", "c")
		if err := c.appendPartQuorum("a", sid, logs["a"], "x"); err != nil {
			t.Fatalf("a Quorum part's write with b up: %v", err)
		}
		if got := partValues(t, logs["c"]); len(got) != 0 {
			t.Fatalf("c, cut off, holds %q", got)
		}
		c.kill("a")
		c.net.Heal("a", "c")
		if next := c.awaitLeader(sid, "a", 3*c.lease+time.Second); next != "c" {
			t.Fatalf("%s was promoted, want c (the earliest of the replicas that tie)", next)
		}
		c.awaitPart("the new leader's part", logs["c"], []string{"x"})
		for deadline := time.Now().Add(c.lease); c.appendPartQuorum("c", sid, logs["c"], "y") != nil; {
			if time.Now().After(deadline) {
				t.Fatal("the new leader's part never served")
			}
			time.Sleep(c.lease / 40)
		}
		c.awaitPart("b's part after the new leader's write", logs["b"], []string{"x", "y"})
	})
}
