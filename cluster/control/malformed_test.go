package control

import (
	"testing"
	"testing/synctest"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/store"
)

// TestAnObjectTheControlPlaneCannotReadIsLeftAlone: a stream whose
// assignment another writer left malformed keeps its assignments (none is
// overwritten or deleted), and the rest of the cluster is placed.
func TestAnObjectTheControlPlaneCannotReadIsLeftAlone(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		register(t, s, testBroker(1), nil)
		broken := createUnawaited(t, s, "broken", 2)
		good := cluster.ShardID{Object: broken.Object, Shard: 0}
		bad := cluster.ShardID{Object: broken.Object, Shard: 1}
		a := cluster.Assignment{Replicas: []cluster.Replica{testBroker(1).Replica()}, Leader: testBroker(1).Replica(),
			Generation: 1, Incarnation: broken.Incarnation}
		put(t, s, AssignmentKey(good), encodeAssignment(a, 1))
		put(t, s, AssignmentKey(bad), []byte(`{"replicas":"not a list"}`))
		_, before, _ := s.Get(t.Context(), Root)

		startController(t, s, "b1", nil)
		v := startView(t, s, testBroker(1))
		if _, err := NewCatalog(CatalogConfig{Store: s}).CreateStream(t.Context(), streamID("orders"), streamConfig(2, 1)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		for _, sh := range []cluster.ShardID{good, bad} {
			if kv, _, _ := s.Get(t.Context(), AssignmentKey(sh)); kv.ModRevision > before {
				t.Fatalf("%v was written by the control plane: %s", sh, kv.Value)
			}
		}
		st := v.Status()
		if len(st.Shards) != 3 { // orders/0, orders/1, broken/0: the malformed one is left out
			t.Fatalf("the view holds %d shards, want 3: %+v", len(st.Shards), st.Shards)
		}
	})
}

func put(t *testing.T, s store.Store, key string, value []byte) {
	t.Helper()
	if _, err := s.Txn(t.Context(), store.Txn{Then: []store.Op{store.Put(key, value)}}); err != nil {
		t.Fatal(err)
	}
}

// TestARegistrationTheControlPlaneCannotReadIsNotLive: b2's registration
// is overwritten with a value this format cannot read; the control plane
// takes b2 for gone, and places nothing on it.
func TestARegistrationTheControlPlaneCannotReadIsNotLive(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		register(t, s, testBroker(1), nil)
		put(t, s, BrokerKey("b2"), encodeBroker(testBroker(2)))
		startController(t, s, "b1", nil)
		synctest.Wait()
		put(t, s, BrokerKey("b2"), []byte(`{"id":"b2"}`))
		if _, err := NewCatalog(CatalogConfig{Store: s}).CreateStream(t.Context(), streamID("orders"), streamConfig(4, 1)); err != nil {
			t.Fatal(err)
		}
		if n := leadersOf(storedAssignments(t, s)); n["b1"] != 4 {
			t.Fatalf("leaders %v: want all four on b1", n)
		}
	})
}
