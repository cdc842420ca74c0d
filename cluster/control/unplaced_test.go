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
	"github.com/felixbroker/felix/engine/cache"
)

// TestACreateNeedingMoreBrokersSaysWhy: replication factor 3 over two
// brokers is not placed; the create answers why, the view shows it, and
// once a third broker joins the stream is placed and the report removed.
func TestACreateNeedingMoreBrokersSaysWhy(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		register(t, s, testBroker(1), nil)
		register(t, s, testBroker(2), nil)
		startController(t, s, "b1", nil)
		v := startView(t, s, testBroker(1))
		c := NewCatalog(CatalogConfig{Store: s})
		entry, err := c.CreateStream(t.Context(), streamID("orders"), streamConfig(2, 3))
		if !errors.Is(err, cluster.ErrTooFewBrokers) || !strings.Contains(err.Error(), "needs 3 brokers, 2 are live") {
			t.Fatalf("create at replication factor 3 over 2 brokers: %v", err)
		}
		synctest.Wait()
		if u := v.Status().Unplaced; len(u) != 1 || u[0].Needed != 3 || u[0].Live != 2 || u[0].Incarnation != entry.Incarnation {
			t.Fatalf("the view's unplaced reports: %+v", u)
		}
		register(t, s, testBroker(3), nil)
		synctest.Wait()
		if err := c.AwaitPlaced(t.Context(), entry.Spec()); err != nil {
			t.Fatalf("once a third broker joined: %v", err)
		}
		synctest.Wait()
		st := v.Status()
		if len(st.Unplaced) != 0 || len(st.Shards) != 2 || st.Shards[0].Live != 3 {
			t.Fatalf("after placement: %+v", st)
		}
		if kv, _, _ := s.Get(t.Context(), UnplacedKey(entry.Object)); kv.Exists() {
			t.Fatal("the unplaced report outlived the placement")
		}
	})
}

// TestACreateWithNoControlPlaneTimesOut: the entry is written, but
// nothing places it within the wait.
func TestACreateWithNoControlPlaneTimesOut(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		c := NewCatalog(CatalogConfig{Store: s, PlaceWait: time.Second})
		start := time.Now()
		_, err := c.CreateStream(t.Context(), streamID("orders"), streamConfig(1, 1))
		if !errors.Is(err, ErrNotPlaced) || time.Since(start) != time.Second {
			t.Fatalf("a create with no control plane: %v after %v, want ErrNotPlaced after 1s", err, time.Since(start))
		}
		if kv, _, _ := s.Get(t.Context(), CatalogKey(objectOf(streamID("orders")))); !kv.Exists() {
			t.Fatal("the entry was not written")
		}
	})
}

// TestADeleteRemovesTheAssignments: the catalog entry goes at once, the
// control plane then deletes the shards' assignments and the views drop
// them; a cache is placed and deleted alike.
func TestADeleteRemovesTheAssignments(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		register(t, s, testBroker(1), nil)
		startController(t, s, "b1", nil)
		v := startView(t, s, testBroker(1))
		c := NewCatalog(CatalogConfig{Store: s})
		id := cache.ID{Tenant: "acme", Namespace: "web", Name: "sessions"}
		entry, err := c.CreateCache(t.Context(), id, cache.Config{Shards: 3, ReplicationFactor: 1})
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if local, _ := v.Leader(id.OwnershipID(), 2); !local || len(v.Local()) != 3 {
			t.Fatalf("the cache's shards are not local: %+v", v.Local())
		}
		if err := c.Delete(t.Context(), entry.Object); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if n := len(storedAssignments(t, s)); n != 0 {
			t.Fatalf("%d assignments left after the delete", n)
		}
		if local, _ := v.Leader(id.OwnershipID(), 2); local || len(v.Local()) != 0 || len(v.Status().Objects) != 0 {
			t.Fatalf("the view after the delete: %+v", v.Status())
		}
		err = c.Delete(t.Context(), entry.Object)
		if !errors.Is(err, ErrNotFound) || !errors.Is(err, cache.ErrCacheNotFound) {
			t.Fatalf("a second delete: %v", err)
		}
		err = c.Delete(t.Context(), objectOf(streamID("none")))
		if !errors.Is(err, engine.ErrStreamNotFound) {
			t.Fatalf("a delete of a stream never created: %v", err)
		}
	})
}

// TestAViewSaysWhenItChanged: Changed is closed by the next change, and
// Ready turns true with the first read.
func TestAViewSaysWhenItChanged(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		v := startView(t, s, testBroker(1))
		changed := v.Changed()
		readAlready := v.Ready() // the first read may have come before Changed was taken
		synctest.Wait()
		if !v.Ready() {
			t.Fatal("not ready after the first read")
		}
		select {
		case <-changed:
		default:
			if !readAlready {
				t.Fatal("the first read did not close Changed")
			}
		}
		changed = v.Changed()
		synctest.Wait()
		select {
		case <-changed:
			t.Fatal("Changed closed with nothing changed")
		default:
		}
		register(t, s, testBroker(2), nil)
		synctest.Wait()
		select {
		case <-changed:
		default:
			t.Fatal("a registration did not close Changed")
		}
		if b := v.Status().Brokers; len(b) != 1 || b[0] != testBroker(2) {
			t.Fatalf("brokers %+v", b)
		}
	})
}
