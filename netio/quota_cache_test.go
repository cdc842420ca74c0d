package netio

import (
	"testing"
	"time"

	"github.com/felixbroker/felix/auth"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/netio/wire"
)

// A tenant over its stored bytes, counting its caches and counters, is
// refused cache puts and counter adds with quota_exceeded naming the
// quota; nothing lands, a delete (which frees space) still goes through,
// and another tenant keeps writing.
func TestACacheWriteOverTheStoredBytesIsRefusedNamingTheQuota(t *testing.T) {
	var sb *StoredBytes
	stored := func(tenant string) int64 { return sb.Of(tenant) }
	var q *auth.Quotas
	b := startCacheBroker(t, func(_ *cache.Options, cfg *Config) {
		q = auth.NewQuotas(auth.Limits{}, map[string]auth.Limits{"acme": {StoredBytes: 200}}, stored, nil)
		cfg.Quotas = q
	})
	sb = NewStoredBytes(b.e, time.Second, b.clock.Now).Caches(b.store)
	ref := b.createCache("c", cache.Config{Durable: true, Shards: 1})
	other := cache.ID{Tenant: "globex", Namespace: "prod", Name: "c"}
	if _, err := b.store.Create(other, cache.Config{Durable: true, Shards: 1}); err != nil {
		t.Fatal(err)
	}
	otherRef := wire.CacheRef{Tenant: []byte(other.Tenant), Namespace: []byte(other.Namespace), Cache: []byte(other.Name)}
	c := b.client(cacheFeaturesAll)

	c.mustPut(ref, "k", string(make([]byte, 300)))
	b.clock.advance(time.Second) // the tenant's figure is read again
	e := errorOf(t, c.put(wire.CachePut{Cache: ref, Key: []byte("k2"), Value: []byte("v")}), wire.CodeQuotaExceeded)
	if e.Details.Quota != "stored_bytes" || e.Details.LimitValue != 200 {
		t.Fatalf("details %+v", e.Details)
	}
	if e := errorOf(t, c.counterAdd(ref, "hits", 1), wire.CodeQuotaExceeded); e.Details.Quota != "stored_bytes" {
		t.Fatalf("counter add: details %+v", e.Details)
	}
	if v := valueOf(t, c.get(ref, "k2")); v.Found {
		t.Fatalf("a refused put landed: %+v", v)
	}
	if w := writtenOf(t, c.del(wire.CacheDelete{Cache: ref, Key: []byte("k")})); !w.Existed {
		t.Fatalf("a delete over the quota: %+v", w)
	}
	c.mustPut(otherRef, "k", "another tenant's value")
	if v := counterOf(t, c.counterAdd(otherRef, "hits", 1)); v.Sum != 1 {
		t.Fatalf("another tenant's counter: %+v", v)
	}
	if n := b.s.AuthMetrics().QuotaStoredBytes.Load(); n != 2 {
		t.Fatalf("QuotaStoredBytes = %d, want 2", n)
	}
}

// A tenant's stored bytes count its caches' and counters' logs once the
// store is named, and never another tenant's.
func TestStoredBytesCountTheTenantsCaches(t *testing.T) {
	b := startCacheBroker(t)
	ref := b.createCache("c", cache.Config{Durable: true, Shards: 2})
	c := b.client(cacheFeaturesAll)
	c.mustPut(ref, "k", string(make([]byte, 1000)))
	values := b.store.TenantBytes("acme")
	counterOf(t, c.counterAdd(ref, "hits", 1))
	if n := b.store.TenantBytes("acme"); n <= values {
		t.Fatalf("the counters' log is not counted: %d after the add, %d before", n, values)
	}
	streamsOnly := NewStoredBytes(b.e, time.Second, b.clock.Now)
	both := NewStoredBytes(b.e, time.Second, b.clock.Now).Caches(b.store)
	if n := streamsOnly.Of("acme"); n != 0 {
		t.Fatalf("without the store: %d", n)
	}
	if n := both.Of("acme"); n < 1000 || n != b.store.TenantBytes("acme") {
		t.Fatalf("with the store: %d, the store says %d", n, b.store.TenantBytes("acme"))
	}
	if n := both.Of("globex"); n != 0 {
		t.Fatalf("another tenant's bytes counted: %d", n)
	}
}
