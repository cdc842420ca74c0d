package control

import (
	"testing"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
)

// viewWithShards is a view of b1 (not following any store) holding a
// stream of n shards, every third led by b1 and the rest by b2.
func viewWithShards(t testing.TB, n int) *View {
	t.Helper()
	v := &View{cfg: ViewConfig{Local: testBroker(1).Replica()}, state: newViewState(), changed: make(chan struct{})}
	b1, b2 := testBroker(1), testBroker(2)
	v.state.brokers[b1.ID], v.state.brokers[b2.ID] = b1, b2
	for i := range n {
		leader := b2.Replica()
		if i%3 == 0 {
			leader = b1.Replica()
		}
		id := cluster.ShardID{Object: orders, Shard: i}
		v.state.shards[id] = ShardAssignment{Shard: id, Assignment: cluster.Assignment{
			Replicas: []cluster.Replica{leader}, Leader: leader, Generation: 1, Incarnation: 1}}
	}
	v.state.extent[orders] = n
	o := buildOwners(&v.state, v.cfg.Local)
	v.owners.Store(&o)
	return v
}

func TestAViewAnswersOwnershipWithoutAllocating(t *testing.T) {
	v := viewWithShards(t, 6)
	id := engine.StreamID{Tenant: "acme", Namespace: "shop", Name: "orders"}
	allocs := testing.AllocsPerRun(100, func() {
		v.Leader(id, 0)
		v.Leader(id, 1)
		v.Leader(cache.ID{Tenant: "acme", Namespace: "shop", Name: "orders"}.OwnershipID(), 1)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per Leader", allocs)
	}
	if local, addr := v.Leader(id, 0); !local || addr != "" {
		t.Fatalf("shard 0: %v, %q", local, addr)
	}
	if local, addr := v.Leader(id, 1); local || addr != testBroker(2).ClientAddr {
		t.Fatalf("shard 1: %v, %q", local, addr)
	}
	cacheID := cache.ID{Tenant: "acme", Namespace: "shop", Name: "orders"}.OwnershipID()
	if local, addr := v.Leader(cacheID, 0); local || addr != "" {
		t.Fatalf("a cache of the stream's name is another object: %v, %q", local, addr)
	}
}
