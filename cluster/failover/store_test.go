package failover_test

import (
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/failover"
)

// TestOlderAssignmentsAreIgnored: the store's generations and revisions
// only rise, so an Assigned below what is known is a late delivery.
func TestOlderAssignmentsAreIgnored(t *testing.T) {
	h := newHarness(t, 1, 0)
	id := shardN(0)
	h.assign(id, failover.Quorum, 3, 30, ra, ra, rb, rc)
	h.assign(id, failover.Quorum, 2, 40, rb, rb, ra, rc)
	h.assign(id, failover.Quorum, 3, 20, rc, rc, ra, rb)
	if sa := h.shardStatus(id).Stored; sa.Revision != 30 || sa.Assignment.Leader != ra {
		t.Fatalf("stored %+v, want revision 30 led by a", sa)
	}
	h.assign(id, failover.Quorum, 3, 31, rb, rb, ra, rc)
	if sa := h.shardStatus(id).Stored; sa.Revision != 31 || sa.Assignment.Leader != rb {
		t.Fatalf("stored %+v, want revision 31 led by b", sa)
	}
}

// TestWatchDeliveringTheOwnWriteFirst: the watch may deliver the
// promotion's own write before its WriteDone; the promotion goes on.
func TestWatchDeliveringTheOwnWriteFirst(t *testing.T) {
	h := newHarness(t, 1, 0)
	id := shardN(0)
	h.assign(id, failover.Quorum, 1, 10, ra, ra, rb, rc)
	w := h.oneWrite(h.tick(lease))
	h.step(failover.Assigned{Stored: cluster.StoredAssignment{Shard: id, Revision: 11, Assignment: w.Assignment},
		ReplicationFactor: 3, Consistency: failover.Quorum})
	if got := h.fenced(h.step(failover.WriteDone{Seq: w.Seq, Revision: 11}), 2); len(got) != 3 {
		t.Fatalf("fenced %v, want all three", got)
	}
}

// TestRemovedDropsThePromotion: a deleted shard's promotion stops, its
// write's answer is ignored, and the shard created again at generation 1
// is taken, but not promoted before the old lease ends.
func TestRemovedDropsThePromotion(t *testing.T) {
	h := newHarness(t, 1, 0)
	id := shardN(0)
	h.assign(id, failover.Quorum, 5, 10, ra, ra, rb, rc)
	h.beat(ra, 1, time.Second, leads(id, 5, 0))
	w := h.oneWrite(h.tick(time.Second + lease))
	h.step(failover.Removed{Shard: id})
	h.step(failover.Removed{Shard: id})
	if n := len(h.m.Status().Shards); n != 0 {
		t.Fatalf("%d shards after Removed", n)
	}
	if acts := h.step(failover.WriteDone{Seq: w.Seq, Revision: 11}); len(acts) != 0 {
		t.Fatalf("answer to a dropped write: %v", acts)
	}
	h.noWrite(h.tick(10*lease), "a removed shard")
	h.assign(id, failover.Quorum, 1, 20, rb, rb, rc, rd)
	if gs := h.beat(rb, 2, 10*lease, leads(id, 1, 0)); !granted(gs, id, 1) {
		t.Fatalf("the new incarnation's leader: granted %v", gs)
	}
	h.noWrite(h.tick(11*lease-1), "within the new leader's lease")
	if w := h.oneWrite(h.tick(11 * lease)); w.Assignment.Generation != 2 || w.ExpectedRevision != 20 {
		t.Fatalf("step 1 of the new incarnation: %+v", w)
	}
}
