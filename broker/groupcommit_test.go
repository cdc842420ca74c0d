package broker

import (
	"fmt"
	"sync"
	"testing"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
)

// With GroupCommit a broker shares one flush scheduler between its
// streams' and caches' OnCommit logs: publishes to a 4-shard stream and
// puts to a 4-shard cache from several clients at once are all
// acknowledged, and survive a restart without it.
func TestGroupCommitServesStreamsAndCachesAndKeepsTheirRecords(t *testing.T) {
	dir := t.TempDir()
	b := start(t, Config{DataDir: dir, GroupCommit: true, Engine: engine.Options{Fsync: shardlog.OnCommit()}})
	if b.flushes == nil {
		t.Fatal("GroupCommit started no flush scheduler")
	}
	ctx := testCtx(t)
	c := dial(t, b)
	if _, err := c.CreateStream(ctx, testStream, client.StreamConfig{Shards: 4, Fsync: client.Fsync{Kind: client.FsyncOnCommit}}); err != nil {
		t.Fatal(err)
	}
	ca := c.Cache(client.CacheName{Tenant: "t", Namespace: "n", Name: "c"})
	if err := ca.Create(ctx, client.CacheConfig{Shards: 4}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			cw := dial(t, b)
			for i := range 25 {
				if _, err := cw.Publish(ctx, testStream, fmt.Appendf(nil, "w%d-%d", w, i)); err != nil {
					t.Error(err)
					return
				}
				if _, err := cw.Cache(client.CacheName{Tenant: "t", Namespace: "n", Name: "c"}).Put(ctx, fmt.Appendf(nil, "w%d-k%d", w, i), []byte("v")); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	c.Close()
	if err := b.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	again := start(t, Config{DataDir: dir})
	c2 := dial(t, again)
	for w := range 4 {
		for i := range 25 {
			it, err := c2.Cache(client.CacheName{Tenant: "t", Namespace: "n", Name: "c"}).Get(ctx, fmt.Appendf(nil, "w%d-k%d", w, i))
			if err != nil || !it.Found || string(it.Value) != "v" {
				t.Fatalf("w%d-k%d after the restart: %+v %v", w, i, it, err)
			}
		}
	}
}
