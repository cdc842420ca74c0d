package control

import (
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/failover"
	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/netio/wire"
)

// TestFailoverGrants: the stored leader's heartbeat at the stored
// generation is granted that shard at that generation, with the term's
// epoch and L; a follower's, the leader's at another generation and a
// broker's that holds no replica are granted nothing; a control plane
// that does not lead refuses heartbeats not_leader.
func TestFailoverGrants(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		w := newFailoverWorld(t, s, s, nil, 3, nil)
		a, epoch := w.placed.Assignment, w.c.Status().Epoch

		g := w.leader().mustGrant(cpID, leadingReport(w.shard, a.Generation, 0))
		want := []failover.GrantedShard{{Shard: w.shard, Generation: a.Generation}}
		if !slices.Equal(g.shards, want) || g.epoch != epoch || g.lease != testShardLease || g.seq != 1 {
			t.Fatalf("the leader's grant %+v; want %v at epoch %d for %v", g, want, epoch, testShardLease)
		}
		for _, f := range w.followers() {
			if g := f.mustGrant(cpID, followingReport(w.shard, a.Generation, 0)); len(g.shards) != 0 || g.epoch != epoch {
				t.Fatalf("follower %s's grant %+v; want no shard at epoch %d", f.id.Broker, g, epoch)
			}
		}
		if g := w.leader().mustGrant(cpID, leadingReport(w.shard, a.Generation+1, 0)); len(g.shards) != 0 {
			t.Fatalf("the leader at another generation: %+v; want no shard", g)
		}
		outsider := newFakeBroker(t, w.net, s, testBroker(4))
		if g := outsider.mustGrant(cpID, leadingReport(w.shard, a.Generation, 0)); len(g.shards) != 0 || g.epoch != epoch {
			t.Fatalf("a broker that is no replica: %+v; want no shard", g)
		}
		if g := outsider.mustGrant(cpID); len(g.shards) != 0 {
			t.Fatalf("an empty heartbeat: %+v; want no shard", g)
		}

		// A heartbeat naming another broker than its sender is refused.
		req := wire.AppendHeartbeat(nil, 0, wire.Heartbeat{Seq: 9, Broker: []byte("b2"), DiskID: []byte("d2")})
		if answer, err := w.leader().tr.Call(t.Context(), cpID, req, nil); err != nil || answer.Type != wire.TypeError {
			t.Fatalf("a heartbeat for another broker: %v, %v; want an ERROR", answer.Type, err)
		}

		w.startController(s, "b2", "cp2", nil, nil) // campaigns behind the first
		synctest.Wait()
		if _, err := w.leader().heartbeat("cp2", leadingReport(w.shard, a.Generation, 0)); !errors.Is(err, wire.CodeNotLeader) {
			t.Fatalf("a heartbeat to a control plane that does not lead: %v; want not_leader", err)
		}
	})
}

// TestFailoverWithoutPeersRefusesHeartbeats: a Controller given no peer
// transport runs no failover driver: heartbeats are refused not_leader
// and the assignments are left as placement wrote them.
func TestFailoverWithoutPeersRefusesHeartbeats(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		w := newFailoverWorld(t, s, s, nil, 1, func(c *ControllerConfig) { c.Peers = nil })
		if _, err := w.leader().heartbeat(cpID, leadingReport(w.shard, 1, 0)); !errors.Is(err, wire.CodeNotLeader) {
			t.Fatalf("%v; want not_leader", err)
		}
		time.Sleep(3 * testShardLease)
		synctest.Wait()
		if got := w.stored(); got.Revision != w.placed.Revision {
			t.Fatalf("stored %+v; want placement's %+v", got, w.placed)
		}
	})
}

// TestFailoverPromotesWhenTheLeaderStopsHeartbeating: the leader stops
// heartbeating; nothing is written before L after its last granted
// heartbeat; then generation G+1 with no leader is written, every
// replica is fenced at G+1 under the term's epoch (after that write: the
// store holds it when each fence comes), the old leader never answers,
// and of the followers' answers the longest is chosen and written as the
// leader at G+1, first in the replicas. The new leader is granted the
// shard at G+1, the old one nothing.
func TestFailoverPromotesWhenTheLeaderStopsHeartbeating(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		w := newFailoverWorld(t, s, s, nil, 3, nil)
		a, epoch, g := w.placed.Assignment, w.c.Status().Epoch, w.placed.Assignment.Generation
		fs := w.followers()
		fs[0].answerFences(w.shard, cleanAt(5, g))
		fs[1].answerFences(w.shard, cleanAt(7, g))

		var last time.Time
		for range 8 {
			if got := w.leader().mustGrant(cpID, leadingReport(w.shard, g, 4)); len(got.shards) != 1 {
				t.Fatalf("the leader's grant %+v", got)
			}
			last = time.Now()
			for _, f := range fs {
				f.mustGrant(cpID, followingReport(w.shard, g, 4))
			}
			time.Sleep(testShardLease / 4)
		}
		time.Sleep(testShardLease - time.Since(last) - testShardLease/4)
		synctest.Wait()
		if got := w.stored(); got.Revision != w.placed.Revision {
			t.Fatalf("before L after the last grant: stored %+v", got)
		}
		time.Sleep(testShardLease / 2)
		synctest.Wait()

		h := w.history(w.placed.Revision)
		if len(h) != 2 {
			t.Fatalf("the shard's writes %+v; want 2", h)
		}
		cleared := cluster.Assignment{Replicas: a.Replicas, Generation: g + 1, Incarnation: a.Incarnation}
		if !h[0].Assignment.Equal(cleared) || h[0].Epoch != epoch {
			t.Fatalf("first write %+v; want %v at epoch %d", h[0], cleared, epoch)
		}
		chosen := fs[1].id
		named := cluster.Assignment{Replicas: append([]cluster.Replica{chosen}, without(a.Replicas, chosen)...),
			Leader: chosen, Generation: g + 1, Incarnation: a.Incarnation}
		if !h[1].Assignment.Equal(named) || h[1].Epoch != epoch || h[1].Revision <= h[0].Revision {
			t.Fatalf("second write %+v; want %v at epoch %d", h[1], named, epoch)
		}
		for _, r := range a.Replicas {
			seen := w.brokers[r.Broker].fencesSeen()
			if len(seen) == 0 {
				t.Fatalf("%s was not fenced", r.Broker)
			}
			for _, f := range seen {
				if f.shard != w.shard || f.generation != g+1 || f.epoch != epoch {
					t.Fatalf("%s's fence %+v; want %v at %d, epoch %d", r.Broker, f, w.shard, g+1, epoch)
				}
			}
			// Step 1 precedes every fence: the store holds G+1 when a fence
			// arrives, leaderless, or named already when enough other
			// answers came first (a fence delivered late).
			if st := seen[0].stored; !st.Equal(cleared) && !st.Equal(named) {
				t.Fatalf("%s fenced while the store held %v; want %v (or, late, %v)", r.Broker, st, cleared, named)
			}
		}
		if got := fs[1].mustGrant(cpID, leadingReport(w.shard, g+1, 7)); len(got.shards) != 1 || got.shards[0].Generation != g+1 {
			t.Fatalf("the new leader's grant %+v", got)
		}
		if got := w.leader().mustGrant(cpID, leadingReport(w.shard, g, 4)); len(got.shards) != 0 {
			t.Fatalf("the old leader's grant %+v; want none", got)
		}
	})
}

// TestFailoverPromotionRacesAnotherWrite: just before the leader's lease
// runs out, another writer stores the shard's assignment (a follower F
// leads at G+1), and the driver's watch does not deliver it yet. The
// promotion's compare-and-swap fails; the driver reads the key again and
// goes on from it: F is granted the shard at G+1 before the watch
// delivered anything. Then F falls silent, and it is replaced at G+2.
func TestFailoverPromotionRacesAnotherWrite(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		ps := &holdingStore{Store: s}
		w := newFailoverWorld(t, s, ps, nil, 3, nil)
		a, epoch, g := w.placed.Assignment, w.c.Status().Epoch, w.placed.Assignment.Generation
		fs := w.followers()
		w.leader().mustGrant(cpID, leadingReport(w.shard, g, 4))
		time.Sleep(testShardLease - testShardLease/4)
		synctest.Wait()

		ps.pause()
		f := fs[0]
		other := cluster.Assignment{Replicas: append([]cluster.Replica{f.id}, without(a.Replicas, f.id)...), Leader: f.id,
			Generation: g + 1, Incarnation: a.Incarnation}
		key := AssignmentKey(w.shard)
		res, err := s.Txn(t.Context(), store.Txn{If: []store.Cmp{store.ModRevisionIs(key, w.placed.Revision)},
			Then: []store.Op{store.Put(key, encodeAssignment(other, epoch))}})
		if err != nil || !res.Succeeded {
			t.Fatalf("the other write: %+v, %v", res, err)
		}
		time.Sleep(testShardLease / 2) // the lease runs out; the promotion's write fails
		synctest.Wait()
		if got := w.stored(); got.Revision != res.Revision {
			t.Fatalf("stored %+v; want the other write's, revision %d", got, res.Revision)
		}
		if got := f.mustGrant(cpID, leadingReport(w.shard, g+1, 4)); len(got.shards) != 1 || got.shards[0].Generation != g+1 {
			t.Fatalf("F's grant after the failed write: %+v; want the shard at %d", got, g+1)
		}
		ps.resume()
		synctest.Wait()
		if h := w.history(w.placed.Revision); len(h) != 1 {
			t.Fatalf("the shard's writes %+v; want the other writer's only", h)
		}

		// F falls silent: it is replaced at G+2.
		w.leader().answerFences(w.shard, cleanAt(3, g))
		fs[1].answerFences(w.shard, cleanAt(6, g))
		time.Sleep(testShardLease + testShardLease/2)
		synctest.Wait()
		got := w.stored()
		if got.Assignment.Leader != fs[1].id || got.Assignment.Generation != g+2 || got.Epoch != epoch {
			t.Fatalf("after F fell silent: %+v; want %s leading at %d", got, fs[1].id.Broker, g+2)
		}
	})
}

// TestFailoverDeposedTermStopsGranting: control plane A leads with a
// frozen clock and grants the leader; A's lease ends at the store and B
// leads, while A still believes it leads. The leader falls silent: A's
// promotion write is refused by the epoch guard, A's term ends deposed,
// and A refuses heartbeats not_leader from then on. Every write of the
// shard after placement's is B's.
func TestFailoverDeposedTermStopsGranting(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		frozen := store.NewManualClock(time.Now()) // A's clock: it never moves
		w := newFailoverWorld(t, s, s, frozen, 3, nil)
		a := w.c
		epochA, g := a.Status().Epoch, w.placed.Assignment.Generation
		b := w.startController(s, "b2", "cp2", nil, nil)
		for range 4 * (testTTL / testShardLease) {
			if got := w.leader().mustGrant(cpID, leadingReport(w.shard, g, 4)); len(got.shards) != 1 || got.epoch != epochA {
				t.Fatalf("A's grant %+v", got)
			}
			time.Sleep(testShardLease / 4)
		}
		time.Sleep(testTTL)
		synctest.Wait()
		if !b.Status().Leading {
			t.Fatalf("B %+v; want it leading", b.Status())
		}
		epochB := b.Status().Epoch

		time.Sleep(2 * testShardLease) // the leader's lease runs out at A and at B
		synctest.Wait()
		sa := a.Status()
		if sa.Leading || sa.Deposed != 1 || !errors.Is(sa.LastEnd, errDeposed) || !errors.Is(sa.LastEnd, store.ErrNotLeader) {
			t.Fatalf("A after its write: %+v; want it deposed by the epoch guard", sa)
		}
		if _, err := w.leader().heartbeat(cpID, leadingReport(w.shard, g, 4)); !errors.Is(err, wire.CodeNotLeader) {
			t.Fatalf("a heartbeat to deposed A: %v; want not_leader", err)
		}
		h := w.history(w.placed.Revision)
		if len(h) == 0 {
			t.Fatal("B wrote nothing")
		}
		for _, as := range h {
			if as.Epoch != epochB {
				t.Fatalf("a write %+v; want B's (epoch %d)", as, epochB)
			}
		}
		if got, err := w.leader().heartbeat("cp2", leadingReport(w.shard, g, 4)); err != nil || got.epoch != epochB || len(got.shards) != 0 {
			t.Fatalf("B's grant to the old leader: %+v, %v", got, err)
		}
	})
}

// without is rs less r, in order.
func without(rs []cluster.Replica, r cluster.Replica) []cluster.Replica {
	return slices.DeleteFunc(slices.Clone(rs), func(x cluster.Replica) bool { return x == r })
}

// TestFailoverWatchBehindACompactionReadsAgain: the driver's watch falls
// behind while another writer names a follower F the leader at G+1 and a
// second stream's catalog entry and assignment are deleted; the history
// is compacted, so the watch ends with ErrCompacted. The driver reads the
// state again: F is granted the shard at G+1, and the deleted shard is
// granted to nobody.
func TestFailoverWatchBehindACompactionReadsAgain(t *testing.T) {
	inBubble(t, func(t *testing.T, m *store.Memory) {
		s := newPausingStore(m)
		w := newFailoverWorld(t, m, s, nil, 3, nil)
		first, placed := w.shard, w.placed
		w.createStream("audit", 3)
		audit := w.placed
		w.shard, w.placed = first, placed
		a, epoch, g := placed.Assignment, w.c.Status().Epoch, placed.Assignment.Generation
		auditLeader := w.brokers[audit.Assignment.Leader.Broker]
		if got := auditLeader.mustGrant(cpID, leadingReport(audit.Shard, audit.Assignment.Generation, 0)); len(got.shards) != 1 {
			t.Fatalf("the audit leader's grant before: %+v", got)
		}
		ranges := s.ranges.Load()

		s.setPaused(true)
		synctest.Wait()
		f := w.followers()[0]
		other := cluster.Assignment{Replicas: append([]cluster.Replica{f.id}, without(a.Replicas, f.id)...), Leader: f.id,
			Generation: g + 1, Incarnation: a.Incarnation}
		key := AssignmentKey(first)
		if res, err := m.Txn(t.Context(), store.Txn{If: []store.Cmp{store.ModRevisionIs(key, placed.Revision)},
			Then: []store.Op{store.Put(key, encodeAssignment(other, epoch))}}); err != nil || !res.Succeeded {
			t.Fatalf("the other write: %+v, %v", res, err)
		}
		if _, err := m.Txn(t.Context(), store.Txn{Then: []store.Op{store.Delete(CatalogKey(audit.Shard.Object)),
			store.Delete(AssignmentKey(audit.Shard))}}); err != nil {
			t.Fatal(err)
		}
		compactAll(t, m)
		s.setPaused(false)
		synctest.Wait()

		if n := s.ranges.Load() - ranges; n != 2 {
			t.Fatalf("%d Ranges after the compaction; want one each for placement and failover", n)
		}
		if got := f.mustGrant(cpID, leadingReport(first, g+1, 0)); len(got.shards) != 1 || got.shards[0].Generation != g+1 {
			t.Fatalf("F's grant after the resync: %+v; want the shard at %d", got, g+1)
		}
		if got := auditLeader.mustGrant(cpID, leadingReport(audit.Shard, audit.Assignment.Generation, 0)); len(got.shards) != 0 {
			t.Fatalf("the deleted shard's leader after the resync: %+v; want nothing", got)
		}
	})
}
