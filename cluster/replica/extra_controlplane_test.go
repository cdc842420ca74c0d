package replica

import (
	"errors"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/netio/wire"
)

// A control plane paused between step 1 of a promotion (generation G+1
// written with no leader) and step 5 (the leader named) is replaced by a
// newly elected one of a higher epoch over the same store, which
// completes the promotion. When the first resumes, nothing it does takes
// effect: its fences (at its G+1, or crafted at the current generation
// and above) are refused by every replica, its writes by the store, and
// the grants it gives once it has read the store again are refused by
// the leader's lease, whose window then runs out, so the leader stops
// acknowledging under it. No broker leads or acknowledges for an older
// generation.
func TestAPausedControlPlaneCannotGrantOrFenceAfterItResumes(t *testing.T) {
	inCluster(t, abc, func(t *testing.T, c *testCluster) {
		sid := testShard(0)
		c.createShard(sid, ConsistencyQuorum, "a", "b", "c")
		acked := c.publishAll(sid, "before", 5)
		old := c.cp
		oldEpoch := old.m.Epoch()
		old.do(func() {
			old.pauseAfter = func(s cluster.StoredAssignment) bool {
				return s.Shard == sid && s.Assignment.Leader == (cluster.Replica{})
			}
		})
		c.kill("a")
		awaitClosed(t, old.paused, 3*c.lease, "the old control plane's step 1")
		if a := old.store.get(sid).Assignment; a.Generation != 2 || a.Leader != (cluster.Replica{}) {
			t.Fatalf("paused after writing %v, want generation 2 with no leader", a)
		}

		cp := c.takeOver("cp2", oldEpoch+1)
		next := c.awaitLeader(sid, "a", 3*c.lease+time.Second)
		now := cp.assignment(sid)
		if now.Generation != 3 {
			t.Fatalf("the new control plane named %v, want generation 3 (above the old one's 2)", now)
		}
		acked = append(acked, c.publishAll(sid, "under-cp2", 3)...)

		old.resume() // its promotion at generation 2 goes on: it fences at epoch 7
		time.Sleep(2 * c.lease)
		for _, id := range []string{"b", "c"} {
			if st := c.fenceState(id, sid); st.Generation != 3 || st.Epoch != oldEpoch+1 {
				t.Fatalf("%s's fence after the old control plane resumed: %+v, want generation 3, epoch %d", id, st, oldEpoch+1)
			}
		}
		var named []cluster.StoredAssignment
		old.do(func() { named = append(named, old.writes...) })
		if len(named) != 1 {
			t.Fatalf("the old control plane wrote %v after it resumed, want only its step 1", named[1:])
		}
		if got := cp.assignment(sid); got.Leader.Broker != next || got.Generation != 3 {
			t.Fatalf("the store holds %v after the old control plane resumed, want %s at 3", got, next)
		}
		acked = append(acked, c.publishAll(sid, "after-resume", 3)...)

		// The fences it would send for the current generation or a later
		// one (had its step 1 been taken) carry its epoch: refused, and
		// the leader is not deposed.
		for _, gen := range []uint64{3, 4} {
			for _, id := range []string{"b", "c"} {
				req := wire.AppendFence(nil, 0, wire.Fence{Log: RefOf(sid), Generation: gen, Epoch: oldEpoch})
				answer, err := old.call(id, req)
				if err != nil {
					t.Fatalf("fence of %s at %d: %v", id, gen, err)
				}
				if answer.Type == wire.TypeFenceOK {
					t.Fatalf("%s took a fence at generation %d from the old control plane (epoch %d)", id, gen, oldEpoch)
				}
				if st := c.fenceState(id, sid); st.Generation != 3 {
					t.Fatalf("%s's fence moved to %+v on the old control plane's fence", id, st)
				}
			}
		}
		if c.brokers[next].node.Leader(sid) == nil {
			t.Fatalf("%s was deposed by the old control plane's fences", next)
		}

		// Its grants: it reads the store again (as its driver would after
		// its failed writes) and the brokers heartbeat it alone. It leases
		// the leader at epoch 7, which the leader's lease refuses.
		old.resync()
		c.net.Freeze("cp2")
		c.heartbeatTo(controlID)
		time.Sleep(c.lease)
		if gen, epoch := c.leaseOf(next, sid); gen != 3 || epoch != oldEpoch+1 {
			t.Fatalf("%s's lease is at generation %d epoch %d, want 3 and %d (the old control plane's grants refused)", next, gen, epoch, oldEpoch+1)
		}
		if _, err := c.publishOn(next, sid, "leased by the old control plane"); !errors.Is(err, ErrUnvouched) && !errors.Is(err, ErrNotLeader) {
			t.Fatalf("a publish on %s leased only by the old control plane: %v, want ErrUnvouched or ErrNotLeader", next, err)
		}
		for _, id := range []string{"b", "c"} {
			if l := c.brokers[id].node.Leader(sid); l != nil && l.Generation() != 3 {
				t.Fatalf("%s leads at generation %d", id, l.Generation())
			}
		}
		c.checkHeld(next, sid, acked)
	})
}
