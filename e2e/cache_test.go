package e2e

import (
	"errors"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
)

func TestACacheThroughTheClientAnswersEveryOperation(t *testing.T) {
	b := startCacheBroker(t, nil)
	c := b.client()
	ctx := testCtx(t)
	ca := newCache(t, c, "sessions", client.CacheConfig{Shards: 2})
	if err := ca.Create(ctx, client.CacheConfig{}); !errors.Is(err, client.ErrAlreadyExists) {
		t.Fatalf("creating it again: %v", err)
	}
	if it, err := ca.Get(ctx, []byte("k")); err != nil || it.Found {
		t.Fatalf("a key never written: %+v %v", it, err)
	}
	w, err := ca.Put(ctx, []byte("k"), []byte("v1"))
	if err != nil || w.Existed {
		t.Fatalf("put: %+v %v", w, err)
	}
	it, err := ca.Get(ctx, []byte("k"))
	if err != nil || !it.Found || it.Offset != w.Offset || string(it.Value) != "v1" || !it.ExpiresAt.IsZero() {
		t.Fatalf("get: %+v %v", it, err)
	}
	_, err = ca.PutIfAbsent(ctx, []byte("k"), []byte("v2"))
	var pe *client.PreconditionError
	if !errors.As(err, &pe) || !errors.Is(err, client.ErrPreconditionFailed) || !pe.Exists || pe.Current != w.Offset {
		t.Fatalf("put if absent over a value: %v", err)
	}
	cas, err := ca.PutIfOffset(ctx, []byte("k"), []byte("v3"), it.Offset)
	if err != nil || !cas.Existed || cas.Offset <= w.Offset {
		t.Fatalf("compare and set: %+v %v", cas, err)
	}
	if _, err := ca.PutIfOffset(ctx, []byte("k"), []byte("v4"), it.Offset); !errors.As(err, &pe) || pe.Current != cas.Offset {
		t.Fatalf("a stale compare and set: %v", err)
	}
	if _, err := ca.DeleteIfOffset(ctx, []byte("k"), it.Offset); !errors.As(err, &pe) || pe.Current != cas.Offset {
		t.Fatalf("a stale conditional delete: %v", err)
	}
	d, err := ca.Delete(ctx, []byte("k"))
	if err != nil || !d.Existed || d.Offset != cas.Offset+1 {
		t.Fatalf("delete: %+v %v", d, err)
	}
	if d, err := ca.Delete(ctx, []byte("k")); err != nil || d.Existed || d.Offset != -1 {
		t.Fatalf("a delete of nothing: %+v %v", d, err)
	}
	if _, err := ca.PutIfOffset(ctx, []byte("k"), []byte("v5"), cas.Offset); !errors.As(err, &pe) || pe.Exists || pe.Current != -1 {
		t.Fatalf("compare and set on a deleted key: %v", err)
	}
	if w, err := ca.PutIfAbsent(ctx, []byte("k"), []byte("v6")); err != nil || w.Existed {
		t.Fatalf("put if absent on a deleted key: %+v %v", w, err)
	}
	if err := ca.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Get(ctx, []byte("k")); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("a get from a dropped cache is an error, not a miss: %v", err)
	}
}

func TestTTLThroughTheClientFollowsTheBrokersClock(t *testing.T) {
	b := startCacheBroker(t, nil)
	ctx := testCtx(t)
	ca := newCache(t, b.client(), "ttl", client.CacheConfig{})
	start := b.clock.Now()
	w, err := ca.Put(ctx, []byte("k"), []byte("v"), client.WithTTL(2*time.Second))
	if err != nil || !w.ExpiresAt.Equal(start.Add(2*time.Second)) {
		t.Fatalf("put with a TTL: %+v %v", w, err)
	}
	if _, err := ca.Put(ctx, []byte("at"), []byte("v"), client.WithExpiresAt(start.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Put(ctx, []byte("k"), []byte("v"), client.WithTTL(time.Microsecond)); !errors.Is(err, client.ErrInvalidArgument) {
		t.Fatalf("a TTL under 1 ms: %v", err)
	}
	b.clock.advance(2*time.Second - time.Millisecond)
	if it, err := ca.Get(ctx, []byte("k")); err != nil || !it.Found || !it.ExpiresAt.Equal(w.ExpiresAt) {
		t.Fatalf("before its expiry: %+v %v", it, err)
	}
	b.clock.advance(time.Millisecond)
	if it, err := ca.Get(ctx, []byte("k")); err != nil || it.Found {
		t.Fatalf("at its expiry: %+v %v", it, err)
	}
	// An expiry passes while the broker is down.
	b.restart()
	b.clock.advance(time.Minute)
	ca = b.client().Cache(client.CacheName{Tenant: "acme", Namespace: "prod", Name: "ttl"})
	if it, err := ca.Get(ctx, []byte("at")); err != nil || it.Found {
		t.Fatalf("an absolute expiry that passed across a restart: %+v %v", it, err)
	}
}

func TestACacheValueSurvivesABrokerRestartThroughTheClient(t *testing.T) {
	b := startCacheBroker(t, nil)
	ctx := testCtx(t)
	ca := newCache(t, b.client(), "durable", client.CacheConfig{Shards: 3})
	written := map[string]int64{}
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		w, err := ca.Put(ctx, []byte(k), []byte("value of "+k))
		if err != nil {
			t.Fatal(err)
		}
		written[k] = w.Offset
	}
	if _, err := ca.Delete(ctx, []byte("e")); err != nil {
		t.Fatal(err)
	}
	b.restart()
	ca = b.client().Cache(client.CacheName{Tenant: "acme", Namespace: "prod", Name: "durable"})
	for k, off := range written {
		it, err := ca.Get(ctx, []byte(k))
		if k == "e" {
			if err != nil || it.Found {
				t.Fatalf("a deleted key after a restart: %+v %v", it, err)
			}
			continue
		}
		if err != nil || !it.Found || string(it.Value) != "value of "+k || it.Offset != off {
			t.Fatalf("%s after a restart: %+v %v", k, it, err)
		}
	}
}

func TestCountersThroughTheClient(t *testing.T) {
	b := startCacheBroker(t, nil)
	ctx := testCtx(t)
	c := b.client()
	newCache(t, c, "counts", client.CacheConfig{})
	hits := c.Cache(client.CacheName{Tenant: "acme", Namespace: "prod", Name: "counts"}).Counter("hits")
	if v, err := hits.Get(ctx); err != nil || v.Exists || v.Sum != 0 {
		t.Fatalf("never written: %+v %v", v, err)
	}
	v, err := hits.Add(ctx, 3)
	if err != nil || !v.Exists || v.Sum != 3 {
		t.Fatalf("first add: %+v %v", v, err)
	}
	if v, err := hits.Add(ctx, -3); err != nil || v.Sum != 0 || !v.Exists {
		t.Fatalf("back to zero: %+v %v", v, err)
	}
	if _, err := hits.Add(ctx, 40); err != nil {
		t.Fatal(err)
	}
	b.restart()
	hits = b.client().Cache(client.CacheName{Tenant: "acme", Namespace: "prod", Name: "counts"}).Counter("hits")
	if v, err := hits.Get(ctx); err != nil || v.Sum != 40 {
		t.Fatalf("after a restart: %+v %v", v, err)
	}
	if v, err := hits.Add(ctx, 2); err != nil || v.Sum != 42 {
		t.Fatalf("an add after a restart: %+v %v", v, err)
	}
	mem := newCache(t, b.client(), "mem", client.CacheConfig{InMemory: true})
	if _, err := mem.Counter("k").Add(ctx, 1); !errors.Is(err, client.ErrInvalidArgument) {
		t.Fatalf("a counter of a cache kept in memory: %v", err)
	}
}
