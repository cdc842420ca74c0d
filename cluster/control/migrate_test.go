package control

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/segment/vfs"
)

// fileCatalogs reads testdata/migrate_*.json, a broker's catalog.json and
// caches/catalog.json as a broker running alone wrote them, through the
// engine's own readers: two streams and a cache.
func fileCatalogs(t *testing.T) ([]engine.StreamInfo, []cache.Info) {
	t.Helper()
	fs := vfs.NewMem()
	for file, dir := range map[string]string{"migrate_streams.json": "data", "migrate_caches.json": "data/caches"} {
		b, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		if err := fs.MkdirAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := vfs.WriteFileAtomic(fs, dir, "catalog.json", b); err != nil {
			t.Fatal(err)
		}
	}
	streams, err := engine.OpenFileCatalog(fs, "data")
	if err != nil {
		t.Fatal(err)
	}
	caches, err := cache.OpenFileCatalog(fs, "data/caches")
	if err != nil {
		t.Fatal(err)
	}
	return streams.List(), caches.List()
}

// TestMigrateWritesTheFileCatalogsIntoTheStore: two streams and a cache
// migrate into an empty store with their configs and Created; the control
// plane then places them on the one broker, which holds every shard.
// Migrating again finds them all there.
func TestMigrateWritesTheFileCatalogsIntoTheStore(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		streams, caches := fileCatalogs(t)
		if len(streams) != 2 || len(caches) != 1 {
			t.Fatalf("testdata holds %d streams and %d caches, want 2 and 1", len(streams), len(caches))
		}
		c := NewCatalog(CatalogConfig{Store: s})
		rep, err := Migrate(t.Context(), c, streams, caches)
		if err != nil || rep != (MigrateReport{Streams: 2, Caches: 1}) {
			t.Fatalf("Migrate: %+v, %v", rep, err)
		}
		b1 := testBroker(1)
		register(t, s, b1, nil)
		startController(t, s, "b1", nil)
		v := startView(t, s, b1)
		synctest.Wait()
		sc, cc := NewStreamCatalog(c, v, 0), NewCacheCatalog(c, v, 0)
		for _, want := range streams {
			got, ok := sc.Get(want.ID)
			if !ok || got.Config != want.Config || !got.Created.Equal(want.Created) {
				t.Fatalf("migrated %v: %+v, %v; want %+v", want.ID, got, ok, want)
			}
			for n := range want.Config.Shards {
				if !v.Holds(want.ID, n) {
					t.Fatalf("the one broker does not hold %v shard %d", want.ID, n)
				}
			}
		}
		got, ok := cc.Get(caches[0].ID)
		if !ok || got.Config != caches[0].Config || !got.Created.Equal(caches[0].Created) {
			t.Fatalf("migrated %v: %+v, %v; want %+v", caches[0].ID, got, ok, caches[0])
		}
		for n := range caches[0].Config.Shards {
			if !v.Holds(caches[0].ID.OwnershipID(), n) {
				t.Fatalf("the one broker does not hold %v shard %d", caches[0].ID, n)
			}
		}

		rep, err = Migrate(t.Context(), c, streams, caches)
		if err != nil || rep != (MigrateReport{StreamsPresent: 2, CachesPresent: 1}) {
			t.Fatalf("Migrate again: %+v, %v; want all present", rep, err)
		}
	})
}

// TestMigrateNeverOverwritesAnotherConfig: a name the store holds with
// another config is refused, naming it, and left as it was; so is an
// entry the cluster could not place; the rest migrate.
func TestMigrateNeverOverwritesAnotherConfig(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		streams, caches := fileCatalogs(t)
		c := NewCatalog(CatalogConfig{Store: s})
		taken := streams[1]
		taken.Config.Shards++
		if _, err := Migrate(t.Context(), c, []engine.StreamInfo{taken}, nil); err != nil {
			t.Fatal(err)
		}
		before, _, _ := s.Get(t.Context(), CatalogKey(streamObject(taken.ID)))

		big := caches[0]
		big.ID.Name, big.Config.ReplicationFactor = "big", 8
		rep, err := Migrate(t.Context(), c, streams, append(caches, big))
		if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), taken.ID.String()) {
			t.Fatalf("Migrate over a conflicting entry: %v, want ErrConflict naming %v", err, taken.ID)
		}
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), big.ID.String()) {
			t.Fatalf("Migrate of a cache at replication factor 8: %v, want ErrInvalid naming %v", err, big.ID)
		}
		if rep != (MigrateReport{Streams: 1, Caches: 1}) {
			t.Fatalf("Migrate over a conflicting entry: %+v, want the other stream and the cache written", rep)
		}
		after, _, _ := s.Get(t.Context(), CatalogKey(streamObject(taken.ID)))
		if after.ModRevision != before.ModRevision {
			t.Fatal("the conflicting entry was overwritten")
		}
	})
}
