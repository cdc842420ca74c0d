package control

import (
	"errors"
	"testing"
	"testing/synctest"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/engine/cache"
)

// TestACacheCatalogCreatesListsAndDeletes: caches are created through one
// broker's catalog and held at once under their OwnershipID, shown by
// another broker's catalog in id order, deleted, and the name errors are
// the cache store's.
func TestACacheCatalogCreatesListsAndDeletes(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		b1, b2 := testBroker(1), testBroker(2)
		register(t, s, b1, nil)
		startController(t, s, "b1", nil)
		v1, v2 := startView(t, s, b1), startView(t, s, b2)
		c := NewCatalog(CatalogConfig{Store: s})
		cc1, cc2 := NewCacheCatalog(c, v1, 0), NewCacheCatalog(c, v2, 0)
		zeta := cache.Info{ID: cache.ID{Tenant: "acme", Namespace: "web", Name: "zeta"},
			Config: cache.Config{Shards: 3, ReplicationFactor: 1}, Created: created}
		alpha := zeta
		alpha.ID.Name = "alpha"
		for _, info := range []cache.Info{zeta, alpha} {
			if err := cc1.Create(info); err != nil {
				t.Fatal(err)
			}
			for n := range 3 {
				if !v1.Holds(info.ID.OwnershipID(), n) {
					t.Fatalf("right after the create, b1 does not hold %v shard %d", info.ID, n)
				}
			}
		}
		if err := cc1.Create(zeta); !errors.Is(err, cache.ErrCacheExists) {
			t.Fatalf("a second create: %v, want cache.ErrCacheExists", err)
		}

		synctest.Wait()
		list := cc2.List()
		if len(list) != 2 || list[0].ID != alpha.ID || list[1].ID != zeta.ID || list[1].Config != zeta.Config ||
			list[1].Generation != 1 || !list[1].Created.Equal(created) {
			t.Fatalf("b2's List: %+v, want alpha then zeta", list)
		}
		if err := cc1.Delete(zeta.ID); err != nil {
			t.Fatal(err)
		}
		if _, ok := cc1.Get(zeta.ID); ok || v1.Holds(zeta.ID.OwnershipID(), 0) {
			t.Fatal("right after the delete, b1 still has the cache")
		}
		if err := cc1.Delete(zeta.ID); !errors.Is(err, cache.ErrCacheNotFound) {
			t.Fatalf("a second delete: %v, want cache.ErrCacheNotFound", err)
		}
	})
}

// TestACatalogGenerationIsShardZerosAssignments: the engine's leader
// epoch is the generation the control plane gave shard 0, once it is
// placed for the entry's incarnation; 1 before.
func TestACatalogGenerationIsShardZerosAssignments(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		v := startView(t, s, testBroker(1))
		cc := NewCacheCatalog(NewCatalog(CatalogConfig{Store: s}), v, 0)
		cfg := cache.Config{Shards: 1, ReplicationFactor: 1}
		id := cache.ID{Tenant: "acme", Namespace: "web", Name: "sessions"}
		res, err := s.Txn(t.Context(), store.Txn{Then: []store.Op{
			store.Put(CatalogKey(cacheObject(id)), encodeEntry(Entry{Cache: &cfg, Created: created}))}})
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if info, ok := cc.Get(id); !ok || info.Generation != 1 {
			t.Fatalf("before placement: %+v, %v; want generation 1", info, ok)
		}
		a := cluster.Assignment{Replicas: []cluster.Replica{testBroker(1).Replica()}, Leader: testBroker(1).Replica(),
			Generation: 7, Incarnation: res.Revision}
		put(t, s, AssignmentKey(cluster.ShardID{Object: cacheObject(id)}), encodeAssignment(a, 1))
		synctest.Wait()
		if info, ok := cc.Get(id); !ok || info.Generation != 7 {
			t.Fatalf("placed at generation 7: %+v, %v", info, ok)
		}
	})
}
