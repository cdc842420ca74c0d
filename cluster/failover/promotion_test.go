package failover_test

import (
	"slices"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/failover"
)

// deadLeader stores generation 1 of shard 0 at revision 10, led by the
// first replica, which heartbeats once at L (durable end durable) and then
// dies. Step 1 runs at 2L and is answered at revision 11; every replica is
// fenced at generation 2.
func deadLeader(t *testing.T, c failover.Consistency, durable int64, replicas ...cluster.Replica) (*harness, cluster.ShardID) {
	t.Helper()
	h := newHarness(t, 3, 0)
	id := shardN(0)
	h.assign(id, c, 1, 10, replicas[0], replicas...)
	if !granted(h.beat(replicas[0], 1, lease, leads(id, 1, durable)), id, 1) {
		t.Fatal("the leader was not granted")
	}
	if got := h.clear(id, 2*lease, 2, 11); !slices.Equal(got, replicas) {
		t.Fatalf("fenced %v, want every replica %v", got, replicas)
	}
	return h, id
}

// Test527: the leader acknowledged a record at Quorum (b has it) and died
// before its next heartbeat, so its last reports say c is the longest.
// Promotion reads the real ends from the fence answers and chooses b.
func Test527(t *testing.T) {
	h := newHarness(t, 3, 0)
	id := shardN(0)
	h.assign(id, failover.Quorum, 1, 10, ra, ra, rb, rc)
	h.beat(rb, 1, lease, follows(id, 1, 9, 0))
	h.beat(rc, 2, lease, follows(id, 1, 10, 0))
	h.beat(ra, 3, lease, leads(id, 1, 10))
	// a appends 11, b makes it durable, a acknowledges it and dies.
	h.clear(id, 2*lease, 2, 11)
	h.noWrite(h.reply(id, rc, 2, 1, 10, 10, true), "one answer of the two needed")
	h.named(h.reply(id, rb, 2, 1, 11, 11, true), rb, 2, 11, rb, ra, rc)
}

// TestEnoughAnswers: a promotion waits for R-M+1 answers (M = R/2+1) not
// from a new disk, or the old leader's own when it holds all it
// acknowledged (a clean stop, or a Leader stream).
func TestEnoughAnswers(t *testing.T) {
	type answer struct {
		from    cluster.Replica
		end     int64
		clean   bool
		newDisk bool
	}
	three := []cluster.Replica{ra, rb, rc}
	five := []cluster.Replica{ra, rb, rc, rd, re}
	cases := []struct {
		name     string
		c        failover.Consistency
		replicas []cluster.Replica
		answers  []answer
		want     cluster.Replica // none: still waiting
	}{
		{"R=3, one follower", failover.Quorum, three, []answer{{rb, 5, true, false}}, none},
		{"R=3, two followers", failover.Quorum, three, []answer{{rb, 5, true, false}, {rc, 6, true, false}}, rc},
		{"R=3, the old leader alone, clean", failover.Quorum, three, []answer{{ra, 5, true, false}}, ra},
		{"R=3, the old leader alone, unclean", failover.Quorum, three, []answer{{ra, 5, false, false}}, none},
		{"R=3, the old leader unclean and a follower", failover.Quorum, three,
			[]answer{{ra, 5, false, false}, {rc, 5, true, false}}, ra},
		{"R=3 Leader stream, the old leader alone, unclean", failover.Leader, three, []answer{{ra, 5, false, false}}, ra},
		{"R=3, a follower and a new disk", failover.Quorum, three, []answer{{rb, 5, true, false}, {rc, 0, true, true}}, none},
		{"R=3, only new disks", failover.Quorum, three,
			[]answer{{ra, 0, true, true}, {rb, 0, true, true}, {rc, 0, true, true}}, none},
		{"R=5, two followers", failover.Quorum, five, []answer{{rb, 5, true, false}, {rc, 5, true, false}}, none},
		{"R=5, three followers", failover.Quorum, five,
			[]answer{{rb, 5, true, false}, {rc, 5, true, false}, {re, 7, true, false}}, re},
		{"R=5, two followers and a new disk", failover.Quorum, five,
			[]answer{{rb, 5, true, false}, {rc, 5, true, false}, {rd, 9, true, true}}, none},
		{"R=5, ties go to the earliest replica", failover.Quorum, five,
			[]answer{{re, 5, true, false}, {rd, 5, true, false}, {rc, 5, true, false}}, rc},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, id := deadLeader(t, c.c, 5, c.replicas...)
			var acts []failover.Action
			for _, a := range c.answers {
				acts = append(acts, h.step(failover.FenceReplied{Shard: id, From: a.from, Generation: 2, Epoch: 3,
					LogEnd: a.end, LastGen: 1, Durable: a.end, Clean: a.clean, NewDisk: a.newDisk})...)
			}
			ws := only[failover.Write](acts)
			if c.want == none {
				if len(ws) != 0 {
					t.Fatalf("promoted %v, want to wait", ws)
				}
				return
			}
			if len(ws) != 1 || ws[0].Assignment.Leader != c.want {
				t.Fatalf("wrote %+v, want %v named", ws, c.want)
			}
		})
	}
}

// TestUncleanTailDoesNotCount: an unclean replica holds only its durable
// end, so a longer LogEnd with a shorter Durable loses to a clean replica
// with a shorter LogEnd.
func TestUncleanTailDoesNotCount(t *testing.T) {
	h, id := deadLeader(t, failover.Quorum, 5, ra, rb, rc)
	h.reply(id, rb, 2, 1, 20, 8, false)
	h.named(h.reply(id, rc, 2, 1, 12, 12, true), rc, 2, 11, rc, ra, rb)
}

// TestLastReplicaStandingWaitsForTheLongerLog: the first answer lost its
// unsynced tail; it is not enough alone and is not chosen over the longer
// log that answers later. Fences go again only to those not answered.
func TestLastReplicaStandingWaitsForTheLongerLog(t *testing.T) {
	h, id := deadLeader(t, failover.Quorum, 5, ra, rb, rc)
	h.noWrite(h.reply(id, rb, 2, 1, 9, 5, false), "one unclean answer")
	acts := h.tick(2*lease + lease/4)
	h.noWrite(acts, "waiting for answers")
	if got := h.fenced(acts, 2); !slices.Equal(got, []cluster.Replica{ra, rc}) {
		t.Fatalf("fenced again %v, want a and c", got)
	}
	h.named(h.reply(id, rc, 2, 1, 9, 9, true), rc, 2, 11, rc, ra, rb)
}

// TestSingleReplicaIsNeverServedEmpty: R=1 and its leader dies: the shard
// is cleared and fenced, and stays unavailable however long it waits.
func TestSingleReplicaIsNeverServedEmpty(t *testing.T) {
	h, id := deadLeader(t, failover.Quorum, 5, ra)
	for at := 2 * lease; at < 20*lease; at += lease / 4 {
		acts := h.tick(at)
		h.noWrite(acts, "no replica answered")
	}
	if ss := h.shardStatus(id); ss.Promotion.Phase != failover.Fencing || ss.Stored.Assignment.Leader != none {
		t.Fatalf("status %+v, want fencing with no leader", ss)
	}
	h.noWrite(h.step(failover.FenceReplied{Shard: id, From: ra, Generation: 2, Epoch: 3, NewDisk: true, Clean: true}),
		"a new disk answered")
}

// TestLeaderStreamReachesTheOldLeadersDurableEnd: a Leader stream
// acknowledged up to its leader's durable end; followers short of it are
// enough in number but not chosen, and the old leader's answer is.
func TestLeaderStreamReachesTheOldLeadersDurableEnd(t *testing.T) {
	h, id := deadLeader(t, failover.Leader, 15, ra, rb, rc)
	if got := h.shardStatus(id).Promotion.Target; got != 15 {
		t.Fatalf("target %d, want 15", got)
	}
	h.reply(id, rb, 2, 1, 10, 10, true)
	h.noWrite(h.reply(id, rc, 2, 1, 14, 14, true), "followers short of the old leader's durable end")
	h.named(h.reply(id, ra, 2, 1, 15, 15, false), ra, 2, 11, ra, rb, rc)
}

// TestDoubleFailover: a leads at 1 and dies; b is promoted at 2, writes
// its generation-start record and dies before replicating; c is promoted
// at 3. With b back, (LastGen, end) prefers b's shorter log at generation
// 2 to a's longer one at 1; without b, a's over c's.
func TestDoubleFailover(t *testing.T) {
	for _, bBack := range []bool{true, false} {
		h, id := deadLeader(t, failover.Quorum, 10, ra, rb, rc)
		h.reply(id, rb, 2, 1, 10, 10, true)
		h.reply(id, rc, 2, 1, 8, 8, true) // enough: b is chosen
		ss := h.shardStatus(id)
		if ss.Promotion.Phase != failover.Naming || ss.Promotion.Chosen != rb {
			t.Fatalf("after the first answers: %+v", ss.Promotion)
		}
		h.step(failover.WriteDone{Seq: 2, Revision: 12})
		at := 2*lease + time.Second
		if !granted(h.beat(rb, 10, at, leads(id, 2, 11)), id, 2) {
			t.Fatal("the new leader was not granted at generation 2")
		}
		if gs := h.beat(ra, 11, at, leads(id, 1, 12)); len(gs) != 0 {
			t.Fatalf("the old leader was granted %v", gs)
		}
		// b dies; its lease runs out at at+L.
		h.noWrite(h.tick(at+lease-1), "before b's lease ends")
		w3 := h.oneWrite(h.tick(at + lease))
		if w3.Assignment.Generation != 3 || w3.ExpectedRevision != 12 {
			t.Fatalf("second step 1: %+v", w3)
		}
		h.step(failover.WriteDone{Seq: w3.Seq, Revision: 13})
		h.reply(id, rc, 3, 1, 8, 8, true)
		if bBack {
			h.named(h.reply(id, rb, 3, 2, 11, 11, true), rb, 3, 13, rb, ra, rc)
			continue
		}
		h.named(h.reply(id, ra, 3, 1, 12, 12, true), ra, 3, 13, ra, rb, rc)
	}
}

// TestStaleFenceAnswersAreIgnored: answers to another epoch, another
// generation, from outside the replica set or before the fence was sent
// count for nothing.
func TestStaleFenceAnswersAreIgnored(t *testing.T) {
	h := newHarness(t, 3, 0)
	id := shardN(0)
	h.assign(id, failover.Quorum, 1, 10, ra, ra, rb, rc)
	w := h.oneWrite(h.tick(lease))
	early := failover.FenceReplied{Shard: id, From: rb, Generation: 2, Epoch: 3, LogEnd: 5, LastGen: 1, Durable: 5, Clean: true}
	h.noWrite(h.step(early), "an answer before the fence")
	h.step(failover.WriteDone{Seq: w.Seq, Revision: 11})
	for _, ev := range []failover.FenceReplied{
		{Shard: id, From: rb, Generation: 2, Epoch: 2, LogEnd: 5, LastGen: 1, Durable: 5, Clean: true},
		{Shard: id, From: rc, Generation: 1, Epoch: 3, LogEnd: 5, LastGen: 1, Durable: 5, Clean: true},
		{Shard: id, From: rc, Generation: 3, Epoch: 3, LogEnd: 5, LastGen: 1, Durable: 5, Clean: true},
		{Shard: id, From: rd, Generation: 2, Epoch: 3, LogEnd: 5, LastGen: 1, Durable: 5, Clean: true},
		{Shard: shardN(1), From: rc, Generation: 2, Epoch: 3, LogEnd: 5, LastGen: 1, Durable: 5, Clean: true},
	} {
		h.noWrite(h.step(ev), "a stale answer")
	}
	if got := h.shardStatus(id).Promotion.Answers; len(got) != 0 {
		t.Fatalf("answers %+v, want none", got)
	}
	h.noWrite(h.reply(id, rb, 2, 1, 5, 5, true), "the first good answer")
	h.named(h.reply(id, rc, 2, 1, 5, 5, true), rb, 2, 11, rb, ra, rc)
}

// TestWriteFailedWaitsForTheStoreAndBeginsHigher: a failed write drops the
// promotion; nothing is granted or written until the next Assigned, and
// then the promotion begins again above every generation stored or
// written.
func TestWriteFailedWaitsForTheStoreAndBeginsHigher(t *testing.T) {
	t.Run("step 1 failed, not applied", func(t *testing.T) {
		h := newHarness(t, 3, 0)
		id := shardN(0)
		h.assign(id, failover.Quorum, 1, 10, ra, ra, rb, rc)
		w := h.oneWrite(h.tick(lease))
		h.step(failover.WriteFailed{Seq: w.Seq})
		h.noWrite(h.tick(2*lease), "stale")
		if gs := h.beat(ra, 1, 2*lease, leads(id, 1, 5)); len(gs) != 0 {
			t.Fatalf("granted %v while stale", gs)
		}
		h.assign(id, failover.Quorum, 1, 10, ra, ra, rb, rc)
		w2 := h.oneWrite(h.tick(2 * lease))
		if w2.Assignment.Generation != 3 || w2.ExpectedRevision != 10 {
			t.Fatalf("restart: %+v, want generation 3 on revision 10", w2)
		}
	})
	t.Run("step 5 failed, step 1 stored", func(t *testing.T) {
		h, id := deadLeader(t, failover.Quorum, 5, ra, rb, rc)
		h.reply(id, rb, 2, 1, 5, 5, true)
		w := h.named(h.reply(id, rc, 2, 1, 5, 5, true), rb, 2, 11, rb, ra, rc)
		h.step(failover.WriteFailed{Seq: w.Seq})
		if !h.shardStatus(id).Stale {
			t.Fatal("not stale after a failed write")
		}
		h.assign(id, failover.Quorum, 2, 11, none, ra, rb, rc)
		w3 := h.oneWrite(h.tick(2*lease + 1))
		if w3.Assignment.Generation != 3 || w3.Assignment.Leader != none || w3.ExpectedRevision != 11 {
			t.Fatalf("restart: %+v, want generation 3 with no leader on revision 11", w3)
		}
		h.step(failover.WriteDone{Seq: w3.Seq, Revision: 12})
		// The old leader is not known now: two answers, clean or not.
		h.noWrite(h.reply(id, ra, 3, 1, 5, 5, true), "one answer, old leader unknown")
		h.named(h.reply(id, rc, 3, 1, 5, 5, true), ra, 3, 12, ra, rb, rc)
	})
	t.Run("someone else wrote", func(t *testing.T) {
		h := newHarness(t, 3, 0)
		id := shardN(0)
		h.assign(id, failover.Quorum, 1, 10, ra, ra, rb, rc)
		w := h.oneWrite(h.tick(lease))
		h.assign(id, failover.Quorum, 4, 20, rb, rb, ra, rc)
		h.noWrite(h.step(failover.WriteFailed{Seq: w.Seq}), "a write already dropped")
		if ss := h.shardStatus(id); ss.Stale || ss.Promotion.Phase != failover.Serving {
			t.Fatalf("status %+v, want serving the newer assignment", ss)
		}
		if !granted(h.beat(rb, 1, lease, leads(id, 4, 0)), id, 4) {
			t.Fatal("the leader someone else named was not granted")
		}
	})
}

// TestTheNewLeaderIsLeasedAndKept: once named, the new leader is granted
// at the new generation, the old one at the old generation is not, and
// the new leader is not replaced before it has had a lease to report.
func TestTheNewLeaderIsLeasedAndKept(t *testing.T) {
	h, id := deadLeader(t, failover.Quorum, 5, ra, rb, rc)
	h.reply(id, rb, 2, 1, 5, 5, true)
	w := h.named(h.reply(id, rc, 2, 1, 5, 5, true), rb, 2, 11, rb, ra, rc)
	named := 2*lease + time.Second
	h.tick(named)
	h.step(failover.WriteDone{Seq: w.Seq, Revision: 12})
	h.step(failover.Assigned{Stored: cluster.StoredAssignment{Shard: id, Revision: 12, Assignment: w.Assignment},
		ReplicationFactor: 3, Consistency: failover.Quorum})
	h.noWrite(h.tick(named+lease-1), "a lease after naming, with no heartbeat")
	if gs := h.beat(ra, 20, named+lease-1, leads(id, 1, 5)); len(gs) != 0 {
		t.Fatalf("old leader granted %v", gs)
	}
	if !granted(h.beat(rb, 21, named+lease-1, leads(id, 2, 5)), id, 2) {
		t.Fatal("the new leader was not granted")
	}
	h.noWrite(h.tick(named+2*lease-2), "within the new leader's lease")
}

// TestAnUncleanAnswerDoesNotCountWhenAcksPrecedeTheFsync: under Periodic
// (acknowledged before the fsync) a replica that stopped uncleanly may
// have lost records it acknowledged, so it does not count towards R-M+1:
// b unclean and c clean are one counted answer, not enough; the old
// leader's clean answer makes it enough.
func TestAnUncleanAnswerDoesNotCountWhenAcksPrecedeTheFsync(t *testing.T) {
	h, id := periodicPromotion(t)
	h.noWrite(h.reply(id, rb, 2, 1, 9, 9, false), "an unclean answer")
	h.noWrite(h.reply(id, rc, 2, 1, 7, 7, true), "one clean answer and one unclean")
	h.named(h.reply(id, ra, 2, 1, 9, 9, true), ra, 2, 11, ra, rb, rc)
}

// TestAnAvoidedLeaderIsChosenOnceTheOthersHaveHadALease: the leader's
// followers cannot answer it (b is cut off, c's disk was replaced, so the
// replica c names never answers again), so the promotion first waits for
// the others' answers rather than choose the old leader again. b's answer
// alone is not enough and c's never comes: a lease after fencing began,
// the old leader's clean answer counts as any other, and it is chosen
// (seed 12 of the simulator, which left the shard leaderless for good).
func TestAnAvoidedLeaderIsChosenOnceTheOthersHaveHadALease(t *testing.T) {
	h := newHarness(t, 1, 0)
	id := shardN(0)
	h.assign(id, failover.Quorum, 1, 10, ra, ra, rb, rc)
	if !granted(h.beat(ra, 1, lease, leadsHeard(id, 1, 5, 0)), id, 1) {
		t.Fatal("the leader was not granted")
	}
	h.beat(ra, 2, lease+lease/4, leadsHeard(id, 1, 5, lease+1))
	if !h.shardStatus(id).Withheld {
		t.Fatal("no quorum answers the leader: the shard should be withheld from it")
	}
	fencing := 2 * lease // the last grant's lease ends
	h.clear(id, fencing, 2, 11)
	h.noWrite(h.reply(id, ra, 2, 1, 5, 5, true), "the avoided old leader's answer")
	h.noWrite(h.reply(id, rb, 2, 1, 5, 5, true), "one answer of the two others needed")
	h.noWrite(h.tick(fencing+lease-1), "within a lease of fencing")
	h.named(h.tick(fencing+lease), ra, 2, 11, ra, rb, rc)
}

// TestAnAvoidedLeaderIsNotChosenWhenTheOthersAnswerInTime: the same, but
// c answers within the lease: b and c are enough, and the longer leads.
func TestAnAvoidedLeaderIsNotChosenWhenTheOthersAnswerInTime(t *testing.T) {
	h := newHarness(t, 1, 0)
	id := shardN(0)
	h.assign(id, failover.Quorum, 1, 10, ra, ra, rb, rc)
	h.beat(ra, 1, lease, leadsHeard(id, 1, 5, 0))
	h.beat(ra, 2, lease+lease/4, leadsHeard(id, 1, 5, lease+1))
	fencing := 2 * lease
	h.clear(id, fencing, 2, 11)
	h.noWrite(h.reply(id, ra, 2, 1, 6, 6, true), "the avoided old leader's answer")
	h.noWrite(h.tick(fencing+lease/2), "half a lease in, one answer")
	h.noWrite(h.reply(id, rb, 2, 1, 5, 5, true), "one answer of the two others needed")
	h.named(h.reply(id, rc, 2, 1, 6, 6, true), rc, 2, 11, rc, ra, rb)
}

// TestAReplicaWhoseBrokerIsOnAnotherDiskIsNotWaitedFor: at Periodic, a's
// unclean answer does not count and c's alone is not enough, so the
// promotion waits for b. Once b heartbeats from another disk (wiped or
// replaced), the replica on b's old disk will never answer: every replica
// has answered or is gone, and the highest answer leads (sim seed 14,
// whose shard stayed leaderless for good).
func TestAReplicaWhoseBrokerIsOnAnotherDiskIsNotWaitedFor(t *testing.T) {
	h, id := periodicPromotion(t)
	h.noWrite(h.reply(id, ra, 2, 1, 9, 7, false), "the old leader's unclean answer")
	h.noWrite(h.reply(id, rc, 2, 1, 8, 8, true), "one clean answer of the two needed")
	h.beat(rb, 1, lease+1)
	h.noWrite(h.tick(lease+2), "b heartbeats from the disk its replica names")
	h.beat(cluster.Replica{Broker: "b", DiskID: "disk-b-new"}, 2, lease+3)
	h.named(h.tick(lease+4), rc, 2, 11, rc, ra, rb)
}

// TestAMajorityGoneIsNotAnswered: of three replicas two are on brokers
// back on other disks; the one left answering may lack a record the two
// gone held at Quorum, so the promotion waits rather than choose it.
func TestAMajorityGoneIsNotAnswered(t *testing.T) {
	h, id := periodicPromotion(t)
	h.noWrite(h.reply(id, rc, 2, 1, 8, 8, true), "one clean answer of the two needed")
	h.beat(cluster.Replica{Broker: "a", DiskID: "disk-a-new"}, 1, lease+1)
	h.beat(cluster.Replica{Broker: "b", DiskID: "disk-b-new"}, 2, lease+2)
	h.noWrite(h.tick(lease+3), "two of three replicas gone, one answer")
	h.noWrite(h.tick(3*lease), "still")
}

// periodicPromotion is shard 0 of a Quorum stream acknowledged before its
// fsync, replicated on a, b and c and led by a, whose lease ran out
// without a heartbeat: step 1 is answered at revision 11, and every
// replica is fenced at generation 2.
func periodicPromotion(t *testing.T) (*harness, cluster.ShardID) {
	t.Helper()
	h := newHarness(t, 1, 0)
	h.acksBeforeSync = true
	id := shardN(0)
	h.assign(id, failover.Quorum, 1, 10, ra, ra, rb, rc)
	w := h.oneWrite(h.tick(lease))
	h.step(failover.WriteDone{Seq: w.Seq, Revision: 11})
	return h, id
}
