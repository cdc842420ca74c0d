package replica

import (
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment"
)

// Readers and subscribers on the leader never see a Quorum record before
// a majority has it: with both followers frozen, a publish is appended
// (and made durable) locally, but Leader.End and Leader.Read do not show
// it, OnCommit is not called for it, and it is not acknowledged; once the
// followers thaw, all three do.
func TestAQuorumRecordIsNotVisibleOnTheLeaderBeforeAMajorityHasIt(t *testing.T) {
	inCluster(t, abc, func(t *testing.T, c *testCluster) {
		var mu sync.Mutex
		var delivered []string
		c.onCommit = func(broker string, _ cluster.ShardID, _, _ int64, records []byte) {
			mu.Lock()
			defer mu.Unlock()
			for it := segment.NewIter(records); ; {
				rec, ok := it.Next()
				if !ok {
					return
				}
				if rec.Flags&FlagGenerationStart == 0 {
					delivered = append(delivered, broker+":"+string(rec.Value))
				}
			}
		}
		seen := func(v string) bool {
			mu.Lock()
			defer mu.Unlock()
			for _, d := range delivered {
				if d == "a:"+v {
					return true
				}
			}
			return false
		}
		// OnCommit runs on the leader's goroutine, which may deliver a
		// moment after the acknowledgement: wait for it a little.
		awaitSeen := func(v string) bool {
			for deadline := time.Now().Add(c.lease / 4); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				if seen(v) {
					return true
				}
			}
			return false
		}
		sid := testShard(0)
		c.createShard(sid, ConsistencyQuorum, "a", "b", "c")
		if _, err := c.publish(sid, "before"); err != nil {
			t.Fatal(err)
		}
		if !awaitSeen("before") {
			t.Fatal("OnCommit did not deliver an acknowledged record")
		}
		ld := c.brokers["a"].node.Leader(sid)
		local := c.brokers["a"].logs[sid]
		c.net.Freeze("b")
		c.net.Freeze("c")
		w := make(waitChan, 1)
		first, err := ld.Append([]shardlog.Entry{{Value: []byte("held"), Timestamp: time.Now().UnixNano()}}, 0, w)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(c.timeout / 2)
		if local.End() <= first || local.Durable() <= first {
			t.Fatalf("the leader's log ends at %d (durable %d): the publish at %d is not appended locally", local.End(), local.Durable(), first)
		}
		if ld.End() > first || ld.Commit() > first {
			t.Fatalf("the leader's End is %d with no follower holding %d", ld.End(), first)
		}
		if out, _, err := ld.Read(first, 1<<20, nil); err != nil || len(out) != 0 {
			t.Fatalf("Read at %d with no follower holding it: %d bytes, %v", first, len(out), err)
		}
		if seen("held") {
			t.Fatal("OnCommit delivered a record no follower holds")
		}
		select {
		case r := <-w:
			t.Fatalf("acknowledged with both followers frozen: %+v", r)
		default:
		}
		c.net.Thaw("b")
		c.net.Thaw("c")
		if r := <-w; r.err != nil {
			t.Fatalf("the publish after the followers thawed: %v", r.err)
		}
		if ld.End() <= first {
			t.Fatalf("End %d after a majority has %d", ld.End(), first)
		}
		out, _, err := ld.Read(first, 1<<20, nil)
		if rec, ok := firstRecord(out); err != nil || !ok || string(rec.Value) != "held" {
			t.Fatalf("Read at %d after a majority has it: %v %v", first, rec, err)
		}
		if !awaitSeen("held") {
			t.Fatal("OnCommit did not deliver the record once a majority had it")
		}
	})
}
