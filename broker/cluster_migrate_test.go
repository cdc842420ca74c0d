package broker

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/felixbroker/felix/client"
)

// A data directory written by a broker that ran alone (today's release)
// is served the same once started in a cluster of one: its catalogs move
// into the store (each catalog.json becomes catalog.json.migrated), the
// only broker is placed every shard, and the streams' records and the
// cache's value are there.
func TestADataDirectoryThatRanAloneIsMigratedIntoTheCluster(t *testing.T) {
	dir := t.TempDir()
	orders, events := client.Stream{Tenant: "t", Namespace: "n", Name: "orders"}, client.Stream{Tenant: "t", Namespace: "n", Name: "events"}
	writeAlone(t, dir, orders, events)
	b := start(t, alone(dir))
	c := dial(t, b)
	if got := readShard(t, c, orders, 0, 2); !slices.Equal(got, []string{"o1", "o2"}) {
		t.Fatalf("orders after the migration: %q", got)
	}
	if n := storedRecords(t, c, events); n != 3 {
		t.Fatalf("events after the migration hold %d records, want 3", n)
	}
	if it, err := c.Cache(client.CacheName{Tenant: "t", Namespace: "n", Name: "c"}).Get(testCtx(t), []byte("k")); err != nil || string(it.Value) != "v" {
		t.Fatalf("the cache after the migration: %+v %v", it, err)
	}
	for _, d := range []string{dir, filepath.Join(dir, "caches")} {
		if _, err := os.Stat(filepath.Join(d, "catalog.json")); !os.IsNotExist(err) {
			t.Fatalf("%s/catalog.json is still there: %v", d, err)
		}
		if _, err := os.Stat(filepath.Join(d, "catalog.json.migrated")); err != nil {
			t.Fatalf("%s/catalog.json.migrated: %v", d, err)
		}
	}
	if _, err := c.Publish(testCtx(t), orders, []byte("o3")); err != nil {
		t.Fatalf("a publish after the migration: %v", err)
	}
	stop(t, b)
	again := start(t, alone(dir))
	if got := readShard(t, dial(t, again), orders, 0, 3); !slices.Equal(got, []string{"o1", "o2", "o3"}) {
		t.Fatalf("orders after a restart in the cluster: %q", got)
	}
}

// writeAlone runs a broker without a cluster on dir: two durable streams
// with records (orders on one shard, events on three) and a durable
// cache with a value.
func writeAlone(t *testing.T, dir string, orders, events client.Stream) {
	t.Helper()
	b := start(t, Config{DataDir: dir})
	c := dial(t, b)
	ctx := testCtx(t)
	onCommit := client.Fsync{Kind: client.FsyncOnCommit}
	if _, err := c.CreateStream(ctx, orders, client.StreamConfig{Fsync: onCommit}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateStream(ctx, events, client.StreamConfig{Shards: 3, Fsync: onCommit}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		s client.Stream
		v string
	}{{orders, "o1"}, {orders, "o2"}, {events, "e1"}, {events, "e2"}, {events, "e3"}} {
		if _, err := c.Publish(ctx, p.s, []byte(p.v)); err != nil {
			t.Fatal(err)
		}
	}
	ca := c.Cache(client.CacheName{Tenant: "t", Namespace: "n", Name: "c"})
	if err := ca.Create(ctx, client.CacheConfig{Fsync: onCommit}); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Put(ctx, []byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	c.Close()
	stop(t, b)
}
