package failover_test

import (
	"slices"
	"testing"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/failover"
)

// rc2 is broker c back on a new disk.
var rc2 = cluster.Replica{Broker: "c", DiskID: "disk-c2"}

// replacedAt checks acts hold step 1 of a replacement: generation gen with
// no leader, c's place given to rc2 joining at gen.
func (h *harness) replacedAt(acts []failover.Action, gen uint64, rev int64, replicas ...cluster.Replica) failover.Write {
	h.t.Helper()
	w := h.oneWrite(acts)
	want := cluster.Assignment{Replicas: replicas, Generation: gen, Incarnation: 1,
		Joins: []cluster.Join{{Replica: rc2, Generation: gen}}}
	if !w.Assignment.Equal(want) || w.ExpectedRevision != rev {
		h.t.Fatalf("step 1: %v on revision %d, want %v on %d", w.Assignment, w.ExpectedRevision, want, rev)
	}
	return w
}

// A broker that heartbeats from a new disk has lost its replicas: each
// shard that had one gives its place to the new disk at the next
// generation, at once (not a lease later), fences the new set, and names
// the leader again once the old leader answered (the new replica's answer
// does not count: it joined at this generation and holds nothing yet).
func TestABrokerBackOnANewDiskTakesItsOldPlaceAtTheNextGeneration(t *testing.T) {
	h := newHarness(t, 3, 0)
	id := shardN(0)
	h.assign(id, failover.Quorum, 1, 10, ra, ra, rb, rc)
	h.beat(ra, 1, lease, leads(id, 1, 10))
	h.beat(rb, 2, lease, follows(id, 1, 10, 0))
	h.noWrite(h.tick(lease+lease/4), "nothing is gone yet")
	h.beat(rc2, 3, lease+lease/2)
	w := h.replacedAt(h.tick(lease+lease/2), 2, 10, ra, rb, rc2)
	if got := h.fenced(h.step(failover.WriteDone{Seq: w.Seq, Revision: 11}), 2); !slices.Equal(got, []cluster.Replica{ra, rb, rc2}) {
		t.Fatalf("fenced %v, want the new set", got)
	}
	h.noWrite(h.reply(id, rc2, 2, 0, 0, 0, true), "the new replica's answer counts for nothing")
	h.noWrite(h.reply(id, rb, 2, 1, 10, 10, true), "b alone is not R-M+1 answers that count")
	named := h.oneWrite(h.reply(id, ra, 2, 1, 10, 10, true))
	want := cluster.Assignment{Replicas: []cluster.Replica{ra, rb, rc2}, Leader: ra, Generation: 2, Incarnation: 1,
		Joins: []cluster.Join{{Replica: rc2, Generation: 2}}}
	if !named.Assignment.Equal(want) || named.ExpectedRevision != 11 {
		t.Fatalf("step 5: %v on %d, want %v on 11", named.Assignment, named.ExpectedRevision, want)
	}
	h.step(failover.WriteDone{Seq: named.Seq, Revision: 12})
	if !granted(h.beat(ra, 4, lease+lease/2, leads(id, 2, 11)), id, 2) {
		t.Fatal("the leader named again is not granted at the new generation")
	}
	h.noWrite(h.tick(2*lease), "a replaced set is not replaced again")
}

// joined stores generation 2 of shard 0 led by a, with c's place taken
// by rc2 at generation 2; a heartbeats once and dies, and the promotion to
// generation 3 is fenced.
func joined(t *testing.T, replicas ...cluster.Replica) (*harness, cluster.ShardID) {
	t.Helper()
	h := newHarness(t, 3, 0)
	id := shardN(0)
	h.step(failover.Assigned{Stored: cluster.StoredAssignment{Shard: id, Revision: 20, Assignment: cluster.Assignment{
		Replicas: replicas, Leader: ra, Generation: 2, Incarnation: 1, Joins: []cluster.Join{{Replica: rc2, Generation: 2}}}},
		ReplicationFactor: len(replicas), Consistency: failover.Quorum, AcksDurable: true})
	h.beat(ra, 1, lease, leads(id, 2, 12))
	w := h.oneWrite(h.tick(2 * lease))
	if w.Assignment.Generation != 3 || w.Assignment.Leader != none || w.Assignment.JoinedAt(rc2) != 2 {
		t.Fatalf("step 1: %v, want generation 3 with no leader, rc2 still joined at 2", w.Assignment)
	}
	h.step(failover.WriteDone{Seq: w.Seq, Revision: 21})
	return h, id
}

// A replica that joined at generation J counts towards a promotion only
// once its log reaches J: before, the records acknowledged at J-1 on a
// majority that held its old disk may be on no answer but the old
// leader's.
func TestAJoinedReplicaCountsOnceItsLogReachesItsJoinGeneration(t *testing.T) {
	t.Run("behind its join", func(t *testing.T) {
		h, id := joined(t, ra, rb, rc2)
		h.noWrite(h.reply(id, rc2, 3, 1, 10, 10, true), "rc2 has not reached generation 2")
		h.noWrite(h.reply(id, rb, 3, 1, 8, 8, true), "b and a replica that does not count yet")
	})
	t.Run("at its join", func(t *testing.T) {
		h, id := joined(t, ra, rb, rc2)
		h.noWrite(h.reply(id, rb, 3, 1, 8, 8, true), "one answer of two")
		w := h.oneWrite(h.reply(id, rc2, 3, 2, 12, 12, true))
		if w.Assignment.Leader != rc2 || !slices.Equal(w.Assignment.Replicas, []cluster.Replica{rc2, ra, rb}) ||
			w.Assignment.JoinedAt(rc2) != 2 {
			t.Fatalf("step 5: %v, want rc2 (the longest) leading, still joined at 2", w.Assignment)
		}
	})
}

// A replacement begins while the leader may still be leased, and a
// Leader stream's leader acknowledges alone: nobody is named before the
// old leader answered its fence or its lease ran out, even when the other
// answers are enough.
func TestAReplacementNamesNobodyBeforeTheOldLeaderAnsweredOrItsLeaseRanOut(t *testing.T) {
	h := newHarness(t, 3, 0)
	id := shardN(0)
	five := []cluster.Replica{ra, rb, rc, rd, re}
	h.assign(id, failover.Quorum, 1, 10, ra, five...)
	h.beat(ra, 1, lease, leads(id, 1, 10))
	h.beat(rc2, 2, lease)
	w := h.replacedAt(h.tick(lease), 2, 10, ra, rb, rc2, rd, re)
	h.step(failover.WriteDone{Seq: w.Seq, Revision: 11})
	h.noWrite(h.reply(id, rb, 2, 1, 10, 10, true), "one answer")
	h.noWrite(h.reply(id, rd, 2, 1, 10, 10, true), "two answers")
	h.noWrite(h.reply(id, re, 2, 1, 10, 10, true), "enough answers, but a's lease runs until 2L")
	h.noWrite(h.tick(2*lease-1), "a's lease has not run out")
	named := h.oneWrite(h.tick(2 * lease))
	if named.Assignment.Leader != rb || named.Assignment.Generation != 2 {
		t.Fatalf("step 5 after the lease: %v, want b (the earliest of the longest)", named.Assignment)
	}
}

// Once every replica has answered, the highest answer leads even when it
// does not count (nothing more can be learnt), but a joined replica
// below its join generation stands for a gone one there: with the only
// replica replaced (R=1), or both replaced (R=2: the other's disk is
// gone too, and its broker's new disk joins at the next generation), the
// shard stays unavailable rather than served short or empty.
func TestAJoinedReplicaBelowItsJoinIsNoAnswerThatAllAnswered(t *testing.T) {
	ra2 := cluster.Replica{Broker: "a", DiskID: "disk-a2"}
	for _, tc := range []struct {
		name     string
		replicas []cluster.Replica
		back     []cluster.Replica // brokers heartbeating from a new disk
		fenced   []cluster.Replica // the set at generation 3, every one answering empty
	}{
		{"R=1, its only replica replaced", []cluster.Replica{rc2}, nil, []cluster.Replica{rc2}},
		{"R=2, the other replica's disk gone too", []cluster.Replica{ra, rc2}, []cluster.Replica{ra2}, []cluster.Replica{ra2, rc2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, 3, 0)
			id := shardN(0)
			h.step(failover.Assigned{Stored: cluster.StoredAssignment{Shard: id, Revision: 20, Assignment: cluster.Assignment{
				Replicas: tc.replicas, Generation: 2, Incarnation: 1, Joins: []cluster.Join{{Replica: rc2, Generation: 2}}}},
				ReplicationFactor: len(tc.replicas), Consistency: failover.Quorum, AcksDurable: true})
			for i, r := range tc.back {
				h.beat(r, uint64(i+1), 0)
			}
			w := h.oneWrite(h.tick(lease))
			if !slices.Equal(w.Assignment.Replicas, tc.fenced) {
				t.Fatalf("step 1: %v, want the set %v", w.Assignment, tc.fenced)
			}
			h.step(failover.WriteDone{Seq: w.Seq, Revision: 21})
			for _, r := range tc.fenced {
				h.noWrite(h.reply(id, r, 3, 0, 0, 0, true), "joined replicas, empty, are all that answer")
			}
			h.noWrite(h.tick(3*lease), "still only joined replicas")
		})
	}
}
