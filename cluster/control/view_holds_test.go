package control

import (
	"errors"
	"testing"
	"testing/synctest"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
)

// TestAViewSaysWhichShardsItHoldsAndWhoLeadsTheRest: two brokers, a
// control plane, a stream of four shards placed two on each. Each view
// holds exactly the shards whose assignment names its broker, names the
// other broker as the leader of the rest, and resolves the other's peer
// address. b1 then comes back on a new disk: its new view holds none of
// the old shards, and b2 no longer names b1 as their leader.
func TestAViewSaysWhichShardsItHoldsAndWhoLeadsTheRest(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		b1, b2 := testBroker(1), testBroker(2)
		r1 := register(t, s, b1, nil)
		register(t, s, b2, nil)
		ctl := startController(t, s, "b1", nil)
		v1, v2 := startView(t, s, b1), startView(t, s, b2)
		id := streamID("orders")
		if _, err := NewCatalog(CatalogConfig{Store: s}).CreateStream(t.Context(), id, streamConfig(4, 1)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		stored := storedAssignments(t, s)
		if n := leadersOf(stored); len(stored) != 4 || n["b1"] != 2 || n["b2"] != 2 {
			t.Fatalf("leaders %v over %d shards, want two each of four", n, len(stored))
		}
		wantPlacementOf(t, v1, b1, id, stored)
		wantPlacementOf(t, v2, b2, id, stored)
		if addr, err := v1.PeerAddr("b2"); err != nil || addr != b2.PeerAddr {
			t.Fatalf("b1's PeerAddr(b2) = %q, %v; want %q", addr, err, b2.PeerAddr)
		}
		if _, err := v1.PeerAddr("b9"); !errors.Is(err, ErrNotRegistered) {
			t.Fatalf("PeerAddr of a broker never registered: %v, want ErrNotRegistered", err)
		}

		ctl.Close() // the assignments stay as they are
		if err := r1.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if _, err := v2.PeerAddr("b1"); !errors.Is(err, ErrNotRegistered) {
			t.Fatalf("PeerAddr of a broker gone: %v, want ErrNotRegistered", err)
		}
		b1.DiskID = "d1-new"
		register(t, s, b1, nil)
		fresh := startView(t, s, b1)
		synctest.Wait()
		for _, a := range stored {
			n := a.Shard.Shard
			if fresh.Holds(id, n) {
				t.Fatalf("b1 on a new disk holds shard %d, placed on %v", n, a.Assignment.Replicas)
			}
			if a.Assignment.Leader.Broker == "b1" {
				if leader, ok := v2.LeaderBroker(id, n); ok {
					t.Fatalf("b2 names %q the leader of shard %d, led by b1 on its old disk", leader, n)
				}
			}
		}
		if addr, err := v2.PeerAddr("b1"); err != nil || addr != b1.PeerAddr {
			t.Fatalf("PeerAddr of b1 registered again: %q, %v", addr, err)
		}
	})
}

// wantPlacementOf checks Holds and LeaderBroker of b's view against the
// stored assignments.
func wantPlacementOf(t *testing.T, v *View, b cluster.Broker, id engine.StreamID, stored []ShardAssignment) {
	t.Helper()
	for _, a := range stored {
		n, leader := a.Shard.Shard, a.Assignment.Leader.Broker
		if got, want := v.Holds(id, n), a.Assignment.Holds(b.Replica()); got != want {
			t.Fatalf("%s: Holds(shard %d) = %v, want %v (replicas %v)", b.ID, n, got, want, a.Assignment.Replicas)
		}
		got, ok := v.LeaderBroker(id, n)
		switch {
		case leader == b.ID && ok:
			t.Fatalf("%s: LeaderBroker(shard %d) = %q; it leads it", b.ID, n, got)
		case leader != b.ID && (!ok || got != leader):
			t.Fatalf("%s: LeaderBroker(shard %d) = %q, %v; want %q", b.ID, n, got, ok, leader)
		}
	}
	if v.Holds(id, len(stored)) || v.Holds(cache.ID{Tenant: id.Tenant, Namespace: id.Namespace, Name: id.Name}.OwnershipID(), 0) {
		t.Fatalf("%s holds a shard that does not exist, or a cache never created", b.ID)
	}
}

// TestAShardPlacedForAnEarlierIncarnationIsNotHeld: the stream is deleted
// and created again; until its shards are placed for the new incarnation,
// the old assignment (still naming this broker) is not held.
func TestAShardPlacedForAnEarlierIncarnationIsNotHeld(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		b1 := testBroker(1)
		v := startView(t, s, b1)
		id := streamID("orders")
		shard := cluster.ShardID{Object: objectOf(id), Shard: 0}
		first := createUnawaited(t, s, "orders", 1)
		assign(t, s, shard, b1.Replica(), first.Incarnation)
		synctest.Wait()
		if !v.Holds(id, 0) {
			t.Fatal("the shard placed on this broker is not held")
		}
		if _, err := s.Txn(t.Context(), store.Txn{Then: []store.Op{store.Delete(CatalogKey(first.Object))}}); err != nil {
			t.Fatal(err)
		}
		second := createUnawaited(t, s, "orders", 1)
		synctest.Wait()
		if v.Holds(id, 0) {
			t.Fatal("a shard placed for the deleted incarnation is held")
		}
		if local, _ := v.Leader(id, 0); !local {
			t.Fatal("Leader no longer answers from the assignment")
		}
		assign(t, s, shard, b1.Replica(), second.Incarnation)
		synctest.Wait()
		if !v.Holds(id, 0) {
			t.Fatal("the shard placed for the new incarnation is not held")
		}
	})
}

// assign writes a shard's assignment, led by r alone, as the control
// plane would.
func assign(t *testing.T, s store.Store, id cluster.ShardID, r cluster.Replica, inc int64) {
	t.Helper()
	a := cluster.Assignment{Replicas: []cluster.Replica{r}, Leader: r, Generation: 1, Incarnation: inc}
	put(t, s, AssignmentKey(id), encodeAssignment(a, 1))
}

func TestHoldsAndLeaderBrokerDoNotAllocate(t *testing.T) {
	v := viewWithShards(t, 6)
	id := engine.StreamID{Tenant: "acme", Namespace: "shop", Name: "orders"}
	cacheID := cache.ID{Tenant: "acme", Namespace: "shop", Name: "orders"}.OwnershipID()
	allocs := testing.AllocsPerRun(100, func() {
		v.Holds(id, 0)
		v.LeaderBroker(id, 1)
		v.Holds(cacheID, 1)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per call", allocs)
	}
	if leader, ok := v.LeaderBroker(id, 1); !ok || leader != "b2" {
		t.Fatalf("LeaderBroker(shard 1) = %q, %v; want b2", leader, ok)
	}
	if leader, ok := v.LeaderBroker(id, 0); ok {
		t.Fatalf("LeaderBroker(shard 0) = %q; this broker leads it", leader)
	}
}
