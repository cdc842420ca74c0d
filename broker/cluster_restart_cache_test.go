package broker

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

// Cache puts forwarded through a broker while the key's owner stops and
// comes back on its disk: every put acknowledged is read back afterwards,
// through the ingress (forwarded) and at the owner, with its value; none
// is acknowledged while the owner is away, and a get then is an error,
// never a miss.
func TestForwardedCachePutsAcknowledgedAcrossAnOwnerRestartAreAllKept(t *testing.T) {
	s := sharedStore(t)
	dirA, dirB := t.TempDir(), t.TempDir()
	a := start(t, clustered("a", s, Config{DataDir: dirA}))
	b := start(t, clustered("b", s, Config{DataDir: dirB}))
	waitView(t, a.View(), "a sees a and b", registered(a.View(), "a", "b"))
	id := cache.ID{Tenant: "t", Namespace: "n", Name: "kv"}
	if _, err := a.Caches().Create(id, cache.Config{Shards: 2, Durable: true}); err != nil {
		t.Fatal(err)
	}
	owner := id.OwnershipID()
	shard := shardOfB(t, a, b, owner, func(shard int) bool { return cacheShardOpen(b, id, shard) })
	ca := dial(t, a).Cache(client.CacheName{Tenant: id.Tenant, Namespace: id.Namespace, Name: id.Name})
	keys := keysOf(shard, 2, 400)

	var mu sync.Mutex
	acked := map[string]string{}
	var next int
	put := func() error {
		mu.Lock()
		k := keys[next%len(keys)]
		next++
		v := fmt.Sprintf("v%d", next)
		mu.Unlock()
		_, err := ca.Put(testCtx(t), k, []byte(v))
		if err == nil {
			mu.Lock()
			acked[string(k)] = v
			mu.Unlock()
			return nil
		}
		if !errors.Is(err, client.ErrNotLeader) && !client.Ambiguous(err) && !client.Retryable(err) {
			t.Errorf("a put refused with %v: neither a redirect nor an outcome to retry", err)
		}
		return err
	}
	for range 20 {
		if err := put(); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	quit := make(chan struct{})
	for range 8 {
		wg.Go(func() {
			for {
				select {
				case <-quit:
					return
				default:
					_ = put()
				}
			}
		})
	}
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 60 || t.Failed() {
			break
		}
		_ = put()
	}
	if err := b.Stop(context.Background()); err != nil {
		t.Error(err)
	}
	close(quit)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	waitView(t, a.View(), "b gone", registered(a.View(), "a"))
	if err := put(); err == nil {
		t.Fatal("a put acknowledged while the key's owner is down")
	}
	if item, err := ca.Get(testCtx(t), keys[0]); err == nil {
		t.Fatalf("a get while the key's owner is down answered %+v, want an error (never a miss)", item)
	}

	b = start(t, clustered("b", s, Config{DataDir: dirB}))
	waitView(t, a.View(), "b back", func() bool {
		leader, ok := a.View().LeaderBroker(owner, shard)
		return ok && leader == "b"
	})
	direct := dial(t, b).Cache(client.CacheName{Tenant: id.Tenant, Namespace: id.Namespace, Name: id.Name})
	for k, v := range acked {
		for via, c := range map[string]*client.Cache{"a (forwarded)": ca, "b": direct} {
			item, err := c.Get(testCtx(t), []byte(k))
			if err != nil || !item.Found || string(item.Value) != v {
				// A later put of the key may have landed without its ack
				// (an outcome unknown): then the value is newer, never older.
				if err == nil && item.Found && newer(string(item.Value), v) {
					continue
				}
				t.Fatalf("%s acknowledged as %q; through %s after the restart: %+v %v", k, v, via, item, err)
			}
		}
	}
}

// newer reports whether value got was written after want ("v<n>", n
// counting up).
func newer(got, want string) bool {
	var g, w int
	_, e1 := fmt.Sscanf(got, "v%d", &g)
	_, e2 := fmt.Sscanf(want, "v%d", &w)
	return e1 == nil && e2 == nil && g > w
}

func cacheShardOpen(b *Broker, id cache.ID, shard int) bool {
	c, err := b.Caches().Cache(id)
	return err == nil && c.Stats()[shard].Open
}

// keysOf is n distinct keys routing to shard of shards.
func keysOf(shard, shards, n int) [][]byte {
	var out [][]byte
	for i := 0; len(out) < n; i++ {
		k := fmt.Appendf(nil, "key-%d", i)
		if engine.ShardFor(k, shards) == shard {
			out = append(out, k)
		}
	}
	return out
}
