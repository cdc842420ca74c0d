package replica

import (
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment"
)

// A shard's secondary parts (a stream's group logs, a cache's counters):
// held beside the primary, led at its generation to its followers, fenced
// with it, truncated for a new leader as it is.

const auxPart = "aux"

// holdPart opens b's log of sid's part and registers it with b's node.
func (c *testCluster) holdPart(id string, sid cluster.ShardID, part string) *shardlog.Log {
	c.t.Helper()
	b := c.brokers[id]
	dir := fmt.Sprintf("/%s/%d/%s", sid.Object.Name, sid.Shard, part)
	l, err := shardlog.Open(shardlog.Options{FS: b.fs, Dir: dir, Fsync: c.fsync, SegmentBytes: 1 << 20, BufferBytes: 64 << 10})
	if err != nil {
		c.t.Fatalf("%s: opening %v/%s: %v", id, sid, part, err)
	}
	if err := b.node.HoldPart(sid, part, l, FollowerConfig{FS: b.fs, Dir: dir, BootID: b.boot, Logger: slog.New(slog.DiscardHandler)}); err != nil {
		c.t.Fatalf("%s: holding %v/%s: %v", id, sid, part, err)
	}
	c.t.Cleanup(func() { l.Close() })
	return l
}

// appendPart appends value to id's part log as its owner does: at the
// leadership's generation, and only while it serves. A part of a Quorum
// shard leads once it heard enough of its followers: it waits (fake time)
// up to L/2 for that.
func (c *testCluster) appendPart(id string, sid cluster.ShardID, l *shardlog.Log, value string) error {
	ld := c.brokers[id].node.PartLeader(sid, auxPart)
	for deadline := time.Now().Add(c.lease / 2); ld == nil && time.Now().Before(deadline); {
		time.Sleep(c.lease / 40)
		ld = c.brokers[id].node.PartLeader(sid, auxPart)
	}
	if ld == nil || !ld.Serving(time.Now()) {
		return ErrNotLeader
	}
	w := make(waitChan, 1) // not AppendWait: its pooled channels may belong to another test's bubble
	if _, err := l.Append([]shardlog.Entry{{Value: []byte(value), Timestamp: time.Now().UnixNano()}}, ld.Generation(), w); err != nil {
		return err
	}
	ld.Appended()
	return (<-w).err
}

// awaitPart waits (fake time) until l holds want, in order.
func (c *testCluster) awaitPart(what string, l *shardlog.Log, want []string) {
	c.t.Helper()
	deadline := time.Now().Add(2 * c.lease)
	var got []string
	for time.Now().Before(deadline) {
		if got = partValues(c.t, l); slices.Equal(got, want) {
			return
		}
		time.Sleep(c.lease / 40)
	}
	c.t.Fatalf("%s holds %q, want %q", what, got, want)
}

// partValues is what l's owner wrote, in order: not the generation-start
// records a Quorum part's leaderships append.
func partValues(t *testing.T, l *shardlog.Log) []string {
	var out []string
	for _, r := range recordsOf(t, l) {
		if uint16(r.flags)&segment.FlagGenerationStart == 0 {
			out = append(out, r.value)
		}
	}
	return out
}

func TestASecondaryPartFollowsItsShardThroughAFailover(t *testing.T) {
	inCluster(t, abc, func(t *testing.T, c *testCluster) {
		sid := testShard(0)
		c.createShard(sid, ConsistencyQuorum, "a", "b", "c")
		logs := map[string]*shardlog.Log{}
		for _, id := range abc {
			logs[id] = c.holdPart(id, sid, auxPart)
		}
		if _, err := c.publish(sid, "r0"); err != nil { // the lease is granted
			t.Fatal(err)
		}
		for _, v := range []string{"p0", "p1"} {
			if err := c.appendPart("a", sid, logs["a"], v); err != nil {
				t.Fatalf("appending %s on the leader's part: %v", v, err)
			}
		}
		if err := c.appendPart("b", sid, logs["b"], "not-leader"); err == nil {
			t.Fatal("a follower's part took an owner's append")
		}
		c.awaitPart("b's part", logs["b"], []string{"p0", "p1"})
		c.awaitPart("c's part", logs["c"], []string{"p0", "p1"})
		if below := c.brokers["a"].node.PartLeader(sid, auxPart).CompactBelow(); below != 3 {
			t.Errorf("CompactBelow with every follower caught up = %d, want 3 (the start record, p0, p1)", below)
		}

		c.kill("a")
		next := c.awaitLeader(sid, "a", 3*c.lease+time.Second)
		deadline := time.Now().Add(c.lease)
		for c.appendPart(next, sid, logs[next], "p2") != nil {
			if time.Now().After(deadline) {
				t.Fatalf("the new leader %s's part never served", next)
			}
			time.Sleep(c.lease / 40)
		}
		ld := c.brokers[next].node.PartLeader(sid, auxPart)
		if lead := c.brokers[next].node.Leader(sid); ld.Generation() != lead.Generation() {
			t.Errorf("the part leads at generation %d, its shard at %d", ld.Generation(), lead.Generation())
		}
		other := "b"
		if next == "b" {
			other = "c"
		}
		c.awaitPart(other+"'s part after the failover", logs[other], []string{"p0", "p1", "p2"})
	})
}

func TestASecondaryPartOfAnOldLeaderIsTruncatedForTheNewOne(t *testing.T) {
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
		if err := c.appendPart("a", sid, logs["a"], "shipped"); err != nil {
			t.Fatal(err)
		}
		c.awaitPart("b's part", logs["b"], []string{"shipped"})
		c.awaitPart("c's part", logs["c"], []string{"shipped"})
		c.net.Freeze("a")
		if err := c.appendPart("a", sid, logs["a"], "stranded"); err != nil {
			t.Fatalf("the frozen leader's lease had not lapsed yet: %v", err)
		}
		next := c.awaitLeader(sid, "a", 4*c.lease)
		deadline := time.Now().Add(c.lease)
		for c.appendPart(next, sid, logs[next], "successor") != nil {
			if time.Now().After(deadline) {
				t.Fatalf("the new leader %s's part never served", next)
			}
			time.Sleep(c.lease / 40)
		}
		if err := c.appendPart("a", sid, logs["a"], "late"); err == nil {
			t.Error("the deposed leader's part still took an owner's append")
		}
		c.net.Thaw("a")
		c.awaitPart("the old leader's part", logs["a"], []string{"shipped", "successor"})
	})
}

func TestAPartHeldWhileItsShardLeadsLeadsWithIt(t *testing.T) {
	inCluster(t, abc, func(t *testing.T, c *testCluster) {
		sid := testShard(0)
		c.createShard(sid, ConsistencyLeader, "a", "b", "c")
		if _, err := c.publish(sid, "r0"); err != nil {
			t.Fatal(err)
		}
		la := c.holdPart("a", sid, auxPart)
		lb := c.holdPart("b", sid, auxPart)
		ld := c.brokers["a"].node.PartLeader(sid, auxPart)
		for deadline := time.Now().Add(c.lease); ld == nil && time.Now().Before(deadline); {
			time.Sleep(c.lease / 40) // its followers are asked where their logs end first
			ld = c.brokers["a"].node.PartLeader(sid, auxPart)
		}
		if ld == nil || ld.Generation() != c.brokers["a"].node.Leader(sid).Generation() {
			t.Fatalf("a part held while its shard leads: leader %v", ld)
		}
		if below := ld.CompactBelow(); below != 0 {
			t.Errorf("CompactBelow before any follower answered = %d, want 0", below)
		}
		if err := c.appendPart("a", sid, la, "p0"); err != nil {
			t.Fatal(err)
		}
		c.awaitPart("b's part", lb, []string{"p0"})
		c.brokers["a"].node.ReleasePart(sid, auxPart)
		if c.brokers["a"].node.PartLeader(sid, auxPart) != nil || c.brokers["a"].node.Leader(sid) == nil {
			t.Error("releasing a part ended the wrong leadership")
		}
	})
}

func TestANewLeaderOfAPartTakesTheLongerTailAFollowerHolds(t *testing.T) {
	inCluster(t, abc, func(t *testing.T, c *testCluster) {
		sid := testShard(0)
		c.createShard(sid, ConsistencyQuorum, "a", "b", "c")
		logs := map[string]*shardlog.Log{"a": c.holdPart("a", sid, auxPart), "c": c.holdPart("c", sid, auxPart)}
		if _, err := c.publish(sid, "r0"); err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{"x", "y"} {
			if err := c.appendPart("a", sid, logs["a"], v); err != nil {
				t.Fatal(err)
			}
		}
		c.awaitPart("c's part", logs["c"], []string{"x", "y"})
		// b's records log is made the longer one, so that b is promoted:
		// its part, held only once it leads, must take c's tail.
		c.net.Freeze("c")
		if _, err := c.publish(sid, "r1"); err != nil {
			t.Fatal(err)
		}
		c.kill("a")
		c.net.Thaw("c")
		if next := c.awaitLeader(sid, "a", 3*c.lease+time.Second); next != "b" {
			t.Fatalf("%s was promoted, want b (the longer records log)", next)
		}
		logs["b"] = c.holdPart("b", sid, auxPart)
		c.awaitPart("the new leader's part", logs["b"], []string{"x", "y"})
		deadline := time.Now().Add(c.lease)
		for c.appendPart("b", sid, logs["b"], "z") != nil {
			if time.Now().After(deadline) {
				t.Fatal("the new leader's part never served")
			}
			time.Sleep(c.lease / 40)
		}
		c.awaitPart("c's part after the new leader's write", logs["c"], []string{"x", "y", "z"})
	})
}
