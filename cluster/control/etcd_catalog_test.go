package control

import (
	"context"
	"testing"

	"github.com/felixbroker/felix/engine"
)

// TestTheStoreBackedCatalogsOnEmbeddedEtcd: on embedded etcd, a file
// catalog migrates (twice: the second finds it all there), the migrated
// stream's shards are placed and held by the one broker; a stream
// created through the StreamCatalog is held as soon as Create returns,
// seen by a second broker's view, and deleted.
func TestTheStoreBackedCatalogsOnEmbeddedEtcd(t *testing.T) {
	s := startEtcd(t, false)
	b1, b2 := testBroker(1), testBroker(2)
	register(t, s, b1, nil)
	startController(t, s, "b1", nil)
	v1, v2 := startView(t, s, b1), startView(t, s, b2)
	c := NewCatalog(CatalogConfig{Store: s, PlaceWait: etcdWaitMax})
	streams, caches := fileCatalogs(t)
	for _, want := range []MigrateReport{{Streams: 2, Caches: 1}, {StreamsPresent: 2, CachesPresent: 1}} {
		if rep, err := Migrate(t.Context(), c, streams, caches); err != nil || rep != want {
			t.Fatalf("Migrate: %+v, %v; want %+v", rep, err, want)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), etcdWaitMax)
	defer cancel()
	if _, err := v1.AwaitObject(ctx, streamObject(streams[0].ID), true); err != nil {
		t.Fatal(err)
	}
	for n := range streams[0].Config.Shards {
		if !v1.Holds(streams[0].ID, n) {
			t.Fatalf("the migrated %v shard %d is not held", streams[0].ID, n)
		}
	}

	sc1, sc2 := NewStreamCatalog(c, v1, etcdWaitMax), NewStreamCatalog(c, v2, etcdWaitMax)
	info := engine.StreamInfo{ID: streamID("fresh"), Config: streamConfig(3, 1), Created: created}
	if err := sc1.Create(info); err != nil {
		t.Fatal(err)
	}
	for n := range 3 {
		if !v1.Holds(info.ID, n) {
			t.Fatalf("right after the create, shard %d is not held", n)
		}
	}
	if _, err := v2.AwaitObject(ctx, streamObject(info.ID), false); err != nil {
		t.Fatal(err)
	}
	if got, ok := sc2.Get(info.ID); !ok || got.Config != info.Config || len(sc2.List()) != 3 {
		t.Fatalf("b2's Get: %+v, %v; List %+v", got, ok, sc2.List())
	}
	if err := sc1.Delete(info.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := sc1.Get(info.ID); ok || v1.Holds(info.ID, 0) {
		t.Fatal("right after the delete, b1 still has the stream")
	}
}
