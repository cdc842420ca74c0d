package control

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/engine"
)

// TestThreeBrokersTakeTwoShardsEachOfASixShardStream: three brokers
// register, each runs a control plane and a view; a stream of six shards
// is created through one, placed two on each broker, and every view
// agrees, as an Ownership too.
func TestThreeBrokersTakeTwoShardsEachOfASixShardStream(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		var views []*View
		var controllers []*Controller
		for n := 1; n <= 3; n++ {
			b := testBroker(n)
			register(t, s, b, nil)
			views = append(views, startView(t, s, b))
			controllers = append(controllers, startController(t, s, b.ID, nil))
		}
		id := streamID("orders")
		entry, err := NewCatalog(CatalogConfig{Store: s}).CreateStream(t.Context(), id, streamConfig(6, 1))
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := leading(controllers...); len(got) != 1 {
			t.Fatalf("controllers leading: %v, want exactly one", got)
		}
		stored := storedAssignments(t, s)
		if n := leadersOf(stored); len(stored) != 6 || n["b1"] != 2 || n["b2"] != 2 || n["b3"] != 2 {
			t.Fatalf("leaders per broker %v over %d assignments, want 2 each of 6", n, len(stored))
		}
		for _, a := range stored {
			if a.Assignment.Incarnation != entry.Incarnation || a.Assignment.Generation != 1 {
				t.Fatalf("assignment %v, want incarnation %d and generation 1", a.Assignment, entry.Incarnation)
			}
		}
		for i, v := range views {
			wantViewOf(t, v, testBroker(i+1), views[0].Status(), id, stored)
		}
	})
}

// wantViewOf checks one broker's view against the stored assignments.
func wantViewOf(t *testing.T, v *View, b cluster.Broker, first Status, id engine.StreamID, stored []ShardAssignment) {
	t.Helper()
	st := v.Status()
	if !v.Ready() || len(st.Shards) != len(stored) || !sameShards(st, first) || len(st.Brokers) != 3 {
		t.Fatalf("%s's view: ready %v, %d shards, %d brokers; it differs from the first's: %v",
			b.ID, v.Ready(), len(st.Shards), len(st.Brokers), !sameShards(st, first))
	}
	local := v.Local()
	if len(local) != 2 || !local[0].Leader || !local[1].Leader || local[0].Entry.Stream == nil {
		t.Fatalf("%s's local shards: %+v, want the two it leads, with the stream's entry", b.ID, local)
	}
	for _, a := range stored {
		isLocal, addr := v.Leader(id, a.Shard.Shard)
		leader := a.Assignment.Leader
		wantAddr := "10.0.0." + strings.TrimPrefix(leader.Broker, "b") + ":7180"
		switch {
		case leader.Broker == b.ID && (!isLocal || addr != ""):
			t.Fatalf("%s: Leader(shard %d) = %v, %q; it leads it", b.ID, a.Shard.Shard, isLocal, addr)
		case leader.Broker != b.ID && (isLocal || addr != wantAddr):
			t.Fatalf("%s: Leader(shard %d) = %v, %q; want %s's address %q", b.ID, a.Shard.Shard, isLocal, addr,
				leader.Broker, wantAddr)
		}
	}
	if local, addr := v.Leader(id, 6); local || addr != "" {
		t.Fatalf("a shard that does not exist: %v, %q", local, addr)
	}
}

// TestACreateOfATakenNameIsRefused: the catalog's compare-and-swap.
func TestACreateOfATakenNameIsRefused(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		register(t, s, testBroker(1), nil)
		startController(t, s, "b1", nil)
		c := NewCatalog(CatalogConfig{Store: s})
		if _, err := c.CreateStream(t.Context(), streamID("orders"), streamConfig(1, 1)); err != nil {
			t.Fatal(err)
		}
		_, err := c.CreateStream(t.Context(), streamID("orders"), streamConfig(2, 1))
		if !errors.Is(err, ErrExists) || !errors.Is(err, engine.ErrStreamExists) {
			t.Fatalf("a second create: %v, want ErrExists and engine.ErrStreamExists", err)
		}
		if _, err := c.CreateStream(t.Context(), streamID("bad/name"), streamConfig(1, 1)); !errors.Is(err, ErrInvalid) {
			t.Fatalf("a bad name: %v, want ErrInvalid", err)
		}
		if _, err := c.CreateStream(t.Context(), streamID("big"), streamConfig(1, 8)); !errors.Is(err, ErrInvalid) {
			t.Fatalf("replication factor 8: %v, want ErrInvalid", err)
		}
	})
}
