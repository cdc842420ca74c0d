package failover_test

import (
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/failover"
)

// TestLeaseRunsOutLAfterTheLastGrantedHeartbeat: promotion begins at the
// At of the last granted heartbeat plus L, not a nanosecond before.
func TestLeaseRunsOutLAfterTheLastGrantedHeartbeat(t *testing.T) {
	h := newHarness(t, 7, 0)
	id := shardN(0)
	h.assign(id, failover.Quorum, 1, 10, ra, ra, rb, rc)
	for i, at := range []time.Duration{lease, lease + lease/4, lease + lease/2} {
		if !granted(h.beat(ra, uint64(i+1), at, leads(id, 1, 5)), id, 1) {
			t.Fatalf("heartbeat at %v: not granted", at)
		}
	}
	last := lease + lease/2
	h.noWrite(h.tick(last+lease-1), "a nanosecond before the lease ends")
	if got := h.shardStatus(id).Expiry; got != last+lease {
		t.Fatalf("expiry %v, want %v", got, last+lease)
	}
	w := h.oneWrite(h.tick(last + lease))
	want := cluster.Assignment{Replicas: []cluster.Replica{ra, rb, rc}, Generation: 2, Incarnation: 1}
	if w.Shard != id || !w.Assignment.Equal(want) || w.ExpectedRevision != 10 {
		t.Fatalf("step 1: %+v, want %v on revision 10", w, want)
	}
}

// TestNewControlPlaneWaitsAFullLease: a machine started at Now promotes
// nothing before Now+L, whether the stored leader never heartbeats or the
// store has no leader at all (a promotion a deposed control plane left).
func TestNewControlPlaneWaitsAFullLease(t *testing.T) {
	const start = 100 * time.Second
	for _, leader := range []cluster.Replica{ra, none} {
		h := newHarness(t, 2, start)
		id := shardN(0)
		h.assign(id, failover.Quorum, 5, 50, leader, ra, rb, rc)
		h.noWrite(h.tick(start+lease-1), "before Now+L")
		w := h.oneWrite(h.tick(start + lease))
		if w.Assignment.Generation != 6 || w.Assignment.Leader != none || w.ExpectedRevision != 50 {
			t.Fatalf("leader %v: step 1 %+v, want generation 6, no leader, on revision 50", leader, w)
		}
	}
}

// TestGrantsGoOnlyToTheStoredLeaderAtTheStoredGeneration: every heartbeat
// gets one Grant; it leases a shard only to its stored leader reporting
// the stored generation.
func TestGrantsGoOnlyToTheStoredLeaderAtTheStoredGeneration(t *testing.T) {
	id, other := shardN(0), shardN(1)
	otherDisk := cluster.Replica{Broker: "a", DiskID: "disk-new"}
	cases := []struct {
		name   string
		from   cluster.Replica
		report failover.Report
		want   bool
	}{
		{"the leader at the stored generation", ra, leads(id, 3, 9), true},
		{"the leader at an older generation", ra, leads(id, 2, 9), false},
		{"the leader at a newer generation than stored", ra, leads(id, 4, 9), false},
		{"a follower that claims to lead", rb, leads(id, 3, 9), false},
		{"a broker outside the replica set", rd, leads(id, 3, 9), false},
		{"the leader's broker on another disk", otherDisk, leads(id, 3, 9), false},
		{"a shard that is not known", ra, leads(other, 3, 9), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, 1, 0)
			h.assign(id, failover.Quorum, 3, 30, ra, ra, rb, rc)
			gs := h.beat(c.from, 42, time.Second, c.report)
			if got := len(gs) == 1 && gs[0] == (failover.GrantedShard{Shard: c.report.Shard, Generation: 3}); got != c.want {
				t.Fatalf("granted %v, want granted %v", gs, c.want)
			}
		})
	}
}

// TestFollowersThatCannotReachTheLeaderReplaceIt: a leader that still
// heartbeats is granted no more once most followers have not heard it
// for more than L, and is replaced once its last lease ends, not before.
func TestFollowersThatCannotReachTheLeaderReplaceIt(t *testing.T) {
	h := newHarness(t, 1, 0)
	id := shardN(0)
	h.assign(id, failover.Quorum, 1, 10, ra, ra, rb, rc)
	at := lease
	h.beat(rb, 1, at, follows(id, 1, 5, lease+1))
	if !granted(h.beat(ra, 2, at, leads(id, 1, 5)), id, 1) {
		t.Fatal("one follower of two cut off: the leader must keep its lease")
	}
	lastGrant := at
	at += lease / 4
	h.beat(rc, 3, at, follows(id, 1, 5, lease+1))
	if !h.shardStatus(id).Withheld {
		t.Fatal("both followers cut off: the shard should be withheld from its leader")
	}
	for i := range 3 { // all before the last lease ends
		if gs := h.beat(ra, uint64(10+i), at+time.Duration(i)*lease/4, leads(id, 1, 5)); len(gs) != 0 {
			t.Fatalf("heartbeat %d after the cut: granted %v", i, gs)
		}
	}
	h.noWrite(h.tick(lastGrant+lease-1), "before the last lease ends")
	if w := h.oneWrite(h.tick(lastGrant + lease)); w.Assignment.Generation != 2 {
		t.Fatalf("step 1: %+v", w)
	}
}

// TestNeverHeardCountsOnlyALeaseAfterTheLeaderWasNamed: a follower that
// never heard its leader says little right after the leader was named.
func TestNeverHeardCountsOnlyALeaseAfterTheLeaderWasNamed(t *testing.T) {
	h := newHarness(t, 1, 0)
	id := shardN(0)
	h.assign(id, failover.Quorum, 1, 10, ra, ra, rb, rc)
	h.beat(rb, 1, lease-1, follows(id, 1, 0, -1))
	h.beat(rc, 2, lease-1, follows(id, 1, 0, -1))
	if !granted(h.beat(ra, 3, lease-1, leads(id, 1, 0)), id, 1) {
		t.Fatal("never heard, within a lease of the naming: the leader must be granted")
	}
	h.beat(rb, 4, lease, follows(id, 1, 0, -1))
	h.beat(rc, 5, lease, follows(id, 1, 0, -1))
	if gs := h.beat(ra, 6, lease, leads(id, 1, 0)); len(gs) != 0 {
		t.Fatalf("never heard a lease after the naming: granted %v", gs)
	}
}

// TestOneShardFailingOverLeavesTheOthersLeased: while one shard is being
// promoted away from a dead leader, another shard's leader keeps its
// grants, and the broker holding both gets only the one it leads.
func TestOneShardFailingOverLeavesTheOthersLeased(t *testing.T) {
	h := newHarness(t, 1, 0)
	s0, s1 := shardN(0), shardN(1)
	h.assign(s0, failover.Quorum, 1, 10, ra, ra, rb, rc)
	h.assign(s1, failover.Quorum, 1, 11, rb, rb, rc, ra)
	h.beat(ra, 1, time.Second, leads(s0, 1, 5), follows(s1, 1, 5, 0))
	beat := uint64(2)
	for at := time.Second; at <= time.Second+2*lease; at += lease / 4 {
		gs := h.beat(rb, beat, at, follows(s0, 1, 5, 0), leads(s1, 1, 5))
		beat++
		if len(gs) != 1 || !granted(gs, s1, 1) {
			t.Fatalf("at %v: broker b granted %v, want only %v", at, gs, s1)
		}
		acts := h.tick(at)
		for _, w := range only[failover.Write](acts) {
			if w.Shard != s0 {
				t.Fatalf("at %v: wrote %+v", at, w)
			}
		}
	}
	if p := h.shardStatus(s0).Promotion.Phase; p != failover.Clearing {
		t.Fatalf("shard 0 is %v, want clearing", p)
	}
	if p := h.shardStatus(s1).Promotion.Phase; p != failover.Serving {
		t.Fatalf("shard 1 is %v, want serving", p)
	}
}

// TestALeaderItsFollowersCannotAnswerIsReplaced: the followers hear the
// leader (their reports are fresh) but their answers do not reach it; the
// leader's own report says a quorum has not answered it for more than a
// lease, so it is granted no more, and replaced once its lease ends.
func TestALeaderItsFollowersCannotAnswerIsReplaced(t *testing.T) {
	h := newHarness(t, 1, 0)
	id := shardN(0)
	h.assign(id, failover.Quorum, 1, 10, ra, ra, rb, rc)
	at := lease
	h.beat(rb, 1, at, follows(id, 1, 5, 0))
	h.beat(rc, 2, at, follows(id, 1, 5, 0))
	if !granted(h.beat(ra, 3, at, leadsHeard(id, 1, 5, lease)), id, 1) {
		t.Fatal("a quorum answered it a lease ago, not more: the leader must keep its lease")
	}
	lastGrant := at
	at += lease / 4
	if gs := h.beat(ra, 4, at, leadsHeard(id, 1, 5, lease+1)); len(gs) != 0 {
		t.Fatalf("no quorum has answered it for more than a lease: granted %v", gs)
	}
	if !h.shardStatus(id).Withheld {
		t.Fatal("the shard should be withheld from its leader")
	}
	h.noWrite(h.tick(lastGrant+lease-1), "before the last lease ends")
	if w := h.oneWrite(h.tick(lastGrant + lease)); w.Assignment.Generation != 2 {
		t.Fatalf("step 1: %+v", w)
	}
}

// leadsHeard is leads with the leader's report of when a quorum of its
// followers last answered it.
func leadsHeard(id cluster.ShardID, gen uint64, durable int64, heard time.Duration) failover.Report {
	r := leads(id, gen, durable)
	r.LeaderHeard = heard
	return r
}

// TestANamedLeaderThatDoesNotLeadIsReplaced: the stored leader reports
// the shard at the stored generation but not leading it (it refused to:
// restarted after an unclean stop, it may have lost what it wrote there).
// Within a lease of its naming it is granted (it may be starting); after
// that it is granted no more, and it is replaced once its lease ends
// (sim seed 318, whose shard stayed with a leader that led nothing).
func TestANamedLeaderThatDoesNotLeadIsReplaced(t *testing.T) {
	h := newHarness(t, 1, 0)
	id := shardN(0)
	h.assign(id, failover.Quorum, 1, 10, ra, ra, rb, rc)
	notLeading := follows(id, 1, 5, -1)
	if !granted(h.beat(ra, 1, lease-1, notLeading), id, 1) {
		t.Fatal("named less than a lease ago: the leader must be granted while it starts")
	}
	if gs := h.beat(ra, 2, lease, notLeading); len(gs) != 0 {
		t.Fatalf("named a lease ago and not leading: granted %v", gs)
	}
	if !granted(h.beat(ra, 3, lease+1, leads(id, 1, 5)), id, 1) {
		t.Fatal("leading at last: the leader must be granted")
	}
	for i := range 4 {
		h.beat(ra, uint64(4+i), lease+2+time.Duration(i)*lease/4, notLeading)
	}
	h.noWrite(h.tick(2*lease), "before the last lease ends")
	if w := h.oneWrite(h.tick(2*lease + 1)); w.Assignment.Generation != 2 {
		t.Fatalf("step 1: %+v", w)
	}
}
