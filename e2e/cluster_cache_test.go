package e2e

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
)

// createClusterCache creates a durable cache of shards named after the
// test through nd, and waits until every broker has opened what it holds
// of it.
func createClusterCache(t *testing.T, c *testCluster, nd *node, shards int) cache.ID {
	t.Helper()
	id := cache.ID{Tenant: "acme", Namespace: "e2e", Name: "c" + sanitize(t.Name())}
	if err := nd.dial(t).Cache(client.CacheName{Tenant: id.Tenant, Namespace: id.Namespace, Name: id.Name}).Create(testCtx(t), client.CacheConfig{Shards: shards}); err != nil {
		t.Fatal(err)
	}
	for _, b := range c.brokers {
		c.waitRound(b, "cache "+id.String()+" open", func() bool {
			ca, err := b.b.Caches().Cache(id)
			if err != nil {
				return false
			}
			stats := ca.Stats()
			return placedHere(b, id.OwnershipID(), shards, func(i int) bool { return stats[i].Open })
		})
	}
	return id
}

func cacheOwnership(id cache.ID) engine.StreamID { return id.OwnershipID() }

// Values written through each of three brokers, to keys of every shard,
// are read back the same through every broker: a key has one owner, and
// the others forward to it rather than answer a miss of their own.
func TestAValueWrittenThroughOneBrokerIsReadableThroughEveryOther(t *testing.T) {
	const shards, keys = 6, 18
	c := startCluster(t, 3, nil)
	id := createClusterCache(t, c, c.brokers[0], shards)
	ctx := testCtx(t)
	caches := make([]*client.Cache, len(c.brokers))
	for i, nd := range c.brokers {
		caches[i] = nd.dial(t).Cache(client.CacheName{Tenant: id.Tenant, Namespace: id.Namespace, Name: id.Name})
	}
	for k := range keys {
		key := keyFor(fmt.Sprintf("key%d", k), k%shards, shards)
		if _, err := caches[k%len(caches)].Put(ctx, key, fmt.Appendf(nil, "value %d", k)); err != nil {
			t.Fatalf("put %s through %s: %v", key, c.brokers[k%len(caches)].id, err)
		}
		if _, err := caches[(k+1)%len(caches)].Counter(string(key)).Add(ctx, int64(k)); err != nil {
			t.Fatalf("counter add %s: %v", key, err)
		}
	}
	for k := range keys {
		key := keyFor(fmt.Sprintf("key%d", k), k%shards, shards)
		for i, ca := range caches {
			item, err := ca.Get(ctx, key)
			if err != nil || !item.Found || string(item.Value) != fmt.Sprintf("value %d", k) {
				t.Fatalf("get %s through %s: %+v %v, want %q", key, c.brokers[i].id, item, err, fmt.Sprintf("value %d", k))
			}
			v, err := ca.Counter(string(key)).Get(ctx)
			if err != nil || !v.Exists || v.Sum != int64(k) {
				t.Fatalf("counter %s through %s: %+v %v, want %d", key, c.brokers[i].id, v, err, k)
			}
		}
		missing := append(key, "-never-written"...)
		for i, ca := range caches {
			if item, err := ca.Get(ctx, missing); err != nil || item.Found {
				t.Fatalf("get of a key never written through %s: %+v %v, want a miss", c.brokers[i].id, item, err)
			}
		}
	}
}

// Two brokers taking writes of one key at once: exactly one of two
// put-if-absent wins, counter adds through both sum exactly, and afterwards
// both brokers read one value, the owner's: a key's writes are serialized
// by its one owner, never accepted by two.
func TestTwoBrokersWritingOneKeyDoNotDiverge(t *testing.T) {
	const adds = 50
	c := startCluster(t, 2, nil)
	id := createClusterCache(t, c, c.brokers[0], 1)
	ctx := testCtx(t)
	caches := []*client.Cache{
		c.brokers[0].dial(t).Cache(client.CacheName{Tenant: id.Tenant, Namespace: id.Namespace, Name: id.Name}),
		c.brokers[1].dial(t).Cache(client.CacheName{Tenant: id.Tenant, Namespace: id.Namespace, Name: id.Name}),
	}
	key := []byte("contended")
	wins, errs := raceBoth(ctx, caches, func(ctx context.Context, ca *client.Cache, i int) error {
		_, err := ca.PutIfAbsent(ctx, key, fmt.Appendf(nil, "from b%d", i))
		return err
	})
	if wins != 1 || !errors.Is(errs, client.ErrPreconditionFailed) {
		t.Fatalf("%d of two put-if-absent won (%v), want exactly one and a precondition_failed", wins, errs)
	}
	_, errs = raceBoth(ctx, caches, func(ctx context.Context, ca *client.Cache, _ int) error {
		for range adds {
			if _, err := ca.Counter("hits").Add(ctx, 1); err != nil {
				return err
			}
		}
		return nil
	})
	if errs != nil {
		t.Fatal(errs)
	}
	var values []string
	for i, ca := range caches {
		item, err := ca.Get(ctx, key)
		if err != nil || !item.Found {
			t.Fatalf("get through b%d: %+v %v", i, item, err)
		}
		values = append(values, fmt.Sprintf("%s@%d", item.Value, item.Offset))
		if v, err := ca.Counter("hits").Get(ctx); err != nil || v.Sum != 2*adds {
			t.Fatalf("the counter through b%d: %+v %v, want %d", i, v, err, 2*adds)
		}
	}
	if values[0] != values[1] {
		t.Fatalf("the brokers read %v: they diverged", values)
	}
}

// raceBoth runs op through each cache at once and returns how many
// succeeded and their errors joined.
func raceBoth(ctx context.Context, caches []*client.Cache, op func(context.Context, *client.Cache, int) error) (int, error) {
	var wg sync.WaitGroup
	errs := make([]error, len(caches))
	start := make(chan struct{})
	for i, ca := range caches {
		wg.Go(func() {
			<-start
			errs[i] = op(ctx, ca, i)
		})
	}
	close(start)
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
		}
	}
	return wins, errors.Join(errs...)
}
