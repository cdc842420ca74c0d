package control

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/engine"
)

// TestAStreamCatalogCreateReturnsOnceThisBrokerHoldsItsShards: the
// create returns only once b1's view answers Holds for every shard (no
// wait in between); b2's catalog then shows the stream; a delete returns
// once b1's view has it gone; a name taken and a name never created are
// the engine's errors.
func TestAStreamCatalogCreateReturnsOnceThisBrokerHoldsItsShards(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		b1, b2 := testBroker(1), testBroker(2)
		register(t, s, b1, nil)
		register(t, s, b2, nil)
		startController(t, s, "b1", nil)
		v1, v2 := startView(t, s, b1), startView(t, s, b2)
		c := NewCatalog(CatalogConfig{Store: s})
		sc1, sc2 := NewStreamCatalog(c, v1, 0), NewStreamCatalog(c, v2, 0)
		info := engine.StreamInfo{ID: streamID("orders"), Config: streamConfig(4, 1), Generation: 1, Created: created}
		if err := sc1.Create(info); err != nil {
			t.Fatal(err)
		}
		held := 0
		for _, a := range storedAssignments(t, s) {
			want := a.Assignment.Holds(b1.Replica())
			if v1.Holds(info.ID, a.Shard.Shard) != want {
				t.Fatalf("right after the create, Holds(shard %d) = %v, want %v", a.Shard.Shard, !want, want)
			}
			if want {
				held++
			}
		}
		if held != 2 {
			t.Fatalf("b1 holds %d shards of 4, want 2", held)
		}

		synctest.Wait()
		got, ok := sc2.Get(info.ID)
		if !ok || got.ID != info.ID || got.Config != info.Config || got.Generation != 1 || !got.Created.Equal(created) {
			t.Fatalf("b2's Get: %+v, %v; want %+v", got, ok, info)
		}
		if list := sc2.List(); len(list) != 1 || list[0] != got {
			t.Fatalf("b2's List: %+v", list)
		}
		if err := sc2.Create(info); !errors.Is(err, engine.ErrStreamExists) {
			t.Fatalf("a second create: %v, want engine.ErrStreamExists", err)
		}

		if err := sc1.Delete(info.ID); err != nil {
			t.Fatal(err)
		}
		if _, ok := sc1.Get(info.ID); ok || len(sc1.List()) != 0 {
			t.Fatal("right after the delete, b1's catalog still has the stream")
		}
		for n := range 4 {
			if v1.Holds(info.ID, n) {
				t.Fatalf("right after the delete, b1 holds shard %d", n)
			}
		}
		if err := sc1.Delete(info.ID); !errors.Is(err, engine.ErrStreamNotFound) {
			t.Fatalf("a second delete: %v, want engine.ErrStreamNotFound", err)
		}
	})
}

// TestAStreamCatalogCreateTooBigForTheClusterIsCreatedButNotPlaced: at
// replication factor 2 over one broker the create answers that the
// stream is created but not placed, and why; the stream stays, and is
// placed (on both brokers) once a second broker registers.
func TestAStreamCatalogCreateTooBigForTheClusterIsCreatedButNotPlaced(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		b1 := testBroker(1)
		register(t, s, b1, nil)
		startController(t, s, "b1", nil)
		v1 := startView(t, s, b1)
		sc := NewStreamCatalog(NewCatalog(CatalogConfig{Store: s}), v1, 0)
		info := engine.StreamInfo{ID: streamID("orders"), Config: streamConfig(4, 2), Created: created}
		err := sc.Create(info)
		if !errors.Is(err, ErrCreatedNotPlaced) || !errors.Is(err, cluster.ErrTooFewBrokers) ||
			!strings.Contains(err.Error(), "needs 2 brokers, 1 is live") {
			t.Fatalf("a create at replication factor 2 over one broker: %v", err)
		}
		synctest.Wait()
		if _, ok := sc.Get(info.ID); !ok {
			t.Fatal("the stream created but not placed is not in the catalog")
		}
		if v1.Holds(info.ID, 0) {
			t.Fatal("a shard not placed is held")
		}
		register(t, s, testBroker(2), nil)
		synctest.Wait()
		for n := range 4 {
			if !v1.Holds(info.ID, n) {
				t.Fatalf("once a second broker joined, b1 does not hold shard %d", n)
			}
		}
	})
}

// TestAStreamCatalogCreateWithNoControlPlaneEndsWithTheWait: the entry is
// written, nothing places it, and the create says so after its wait.
func TestAStreamCatalogCreateWithNoControlPlaneEndsWithTheWait(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		sc := NewStreamCatalog(NewCatalog(CatalogConfig{Store: s}), startView(t, s, testBroker(1)), time.Second)
		start := time.Now()
		err := sc.Create(engine.StreamInfo{ID: streamID("orders"), Config: streamConfig(1, 1)})
		if !errors.Is(err, ErrCreatedNotPlaced) || !errors.Is(err, ErrNotPlaced) || time.Since(start) != time.Second {
			t.Fatalf("a create with no control plane: %v after %v, want ErrCreatedNotPlaced after 1s", err, time.Since(start))
		}
		synctest.Wait()
		if got, ok := sc.Get(streamID("orders")); !ok || got.Created.IsZero() {
			t.Fatalf("the entry written: %+v, %v; want it there, stamped", got, ok)
		}
	})
}
