package control

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/engine"
)

// Timings of the tests in a synctest bubble (its fake clock).
const (
	testTTL = 3 * time.Second
)

// testBroker is broker n's registration: id bN on disk dN.
func testBroker(n int) cluster.Broker {
	return cluster.Broker{ID: fmt.Sprintf("b%d", n), DiskID: fmt.Sprintf("d%d", n),
		ClientAddr: fmt.Sprintf("10.0.0.%d:7180", n), PeerAddr: fmt.Sprintf("10.0.0.%d:7190", n)}
}

func register(t *testing.T, s store.Store, b cluster.Broker, clock store.Clock) *Registration {
	t.Helper()
	r, err := Register(t.Context(), RegistrationConfig{Store: s, Broker: b, TTL: testTTL, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Stop(context.Background()) })
	return r
}

func startController(t *testing.T, s store.Store, id string, clock store.Clock) *Controller {
	t.Helper()
	c, err := StartController(ControllerConfig{Store: s, ID: id, LeaseTTL: testTTL, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func startView(t *testing.T, s store.Store, b cluster.Broker) *View {
	t.Helper()
	v, err := StartView(ViewConfig{Store: s, Local: b.Replica()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	return v
}

// streamConfig is a stream of shards at replication factor rf.
func streamConfig(shards, rf int) engine.StreamConfig {
	return engine.StreamConfig{Shards: shards, ReplicationFactor: rf, Consistency: engine.ConsistencyLeader,
		Delivery: engine.DeliveryAtMostOnce, Kind: engine.KindStream}
}

func streamID(name string) engine.StreamID {
	return engine.StreamID{Tenant: "acme", Namespace: "shop", Name: name}
}

func objectOf(id engine.StreamID) cluster.ObjectID {
	return cluster.ObjectID{Kind: cluster.KindStream, Tenant: id.Tenant, Namespace: id.Namespace, Name: id.Name}
}

// storedAssignments reads every assignment in the store.
func storedAssignments(t *testing.T, s store.Store) []ShardAssignment {
	t.Helper()
	kvs, _, err := s.Range(t.Context(), placementDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []ShardAssignment
	for _, kv := range kvs {
		k, err := parseKey(kv.Key)
		if err != nil {
			t.Fatal(err)
		}
		if k.kind != keyAssignment {
			continue
		}
		a, err := decodeAssignment(k.shard, kv)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// leadersOf counts the shards each broker leads.
func leadersOf(as []ShardAssignment) map[string]int {
	n := map[string]int{}
	for _, a := range as {
		n[a.Assignment.Leader.Broker]++
	}
	return n
}

// leading is the controllers that lead now.
func leading(cs ...*Controller) []int {
	var out []int
	for i, c := range cs {
		if c.Status().Leading {
			out = append(out, i)
		}
	}
	return out
}

// sameShards reports whether two views hold the same assignments.
func sameShards(a, b Status) bool {
	return slices.EqualFunc(a.Shards, b.Shards, func(x, y ShardStatus) bool {
		return x.Shard == y.Shard && x.Assignment.Equal(y.Assignment) && x.Revision == y.Revision
	})
}

// inBubble runs f in a synctest bubble over an in-memory store on the
// bubble's clock.
func inBubble(t *testing.T, f func(t *testing.T, s *store.Memory)) {
	synctest.Test(t, func(t *testing.T) {
		s := store.NewMemory(store.MemoryConfig{})
		t.Cleanup(func() { s.Close() }) // runs last: registered first
		f(t, s)
	})
}
