package netio

import (
	"testing"
	"time"

	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/netio/wire"
)

// startAuthCacheBroker is a cache broker verifying tokens signed by a key
// of its own; it returns the signer.
func startAuthCacheBroker(t *testing.T) (*cacheBroker, *signer) {
	t.Helper()
	clock := newFakeClock()
	sg := newSigner(t, clock)
	a := authenticator(t, clock, sg.public())
	b := startCacheBroker(t, func(_ *cache.Options, cfg *Config) { cfg.Authenticator = a })
	return b, sg
}

// A token's cache permissions are checked per operation: cache.read
// reads and watches, cache.write puts and deletes, admin creates and
// drops; a refusal changes nothing and says nothing of existence.
func TestUnauthorizedCacheIsRefused(t *testing.T) {
	b, sg := startAuthCacheBroker(t)
	ref := b.createCache("sessions", cache.Config{Durable: true})
	missing := ref
	missing.Cache = []byte("nope")
	writer := b.dial()
	writer.hello(cacheFeaturesAll, sg.token("acme", time.Hour, "cache.write:prod/*"))
	reader := b.dial()
	reader.hello(cacheFeaturesAll, sg.token("acme", time.Hour, "cache.read:prod/sessions"))

	writer.mustPut(ref, "k", "v1")
	errorOf(t, writer.get(ref, "k"), wire.CodeForbidden)
	errorOf(t, writer.control(&wire.CacheWatch{Cache: ref, Key: []byte("k")}), wire.CodeForbidden)
	if v := valueOf(t, reader.get(ref, "k")); string(v.Value) != "v1" {
		t.Fatalf("read %q", v.Value)
	}
	reader.watch(wire.CacheWatch{Cache: ref, Key: []byte("k")})
	for _, r := range []wire.CacheRef{ref, missing} {
		errorOf(t, reader.put(wire.CachePut{Cache: r, Key: []byte("k"), Value: []byte("v2")}), wire.CodeForbidden)
		errorOf(t, reader.del(wire.CacheDelete{Cache: r, Key: []byte("k")}), wire.CodeForbidden)
		errorOf(t, writer.control(&wire.CacheDrop{Cache: r}), wire.CodeForbidden)
	}
	errorOf(t, writer.control(&wire.CacheCreate{Cache: missing}), wire.CodeForbidden)
	if v := valueOf(t, reader.get(ref, "k")); string(v.Value) != "v1" {
		t.Fatalf("a refused write changed the value to %q", v.Value)
	}
	other := b.dial()
	other.hello(cacheFeaturesAll, sg.token("globex", time.Hour, "*:*"))
	errorOf(t, other.get(ref, "k"), wire.CodeForbidden)
	errorOf(t, other.put(wire.CachePut{Cache: ref, Key: []byte("k"), Value: []byte("x")}), wire.CodeForbidden)
}

// Counters need the counter permission, on the counter's cache.
func TestUnauthorizedCounterIsRefused(t *testing.T) {
	b, sg := startAuthCacheBroker(t)
	ref := b.createCache("hits", cache.Config{Durable: true})
	allowed := b.dial()
	allowed.hello(cacheFeaturesAll, sg.token("acme", time.Hour, "counter:prod/hits"))
	refused := b.dial()
	refused.hello(cacheFeaturesAll, sg.token("acme", time.Hour, "cache.read:*", "cache.write:*", "counter:prod/other"))

	counterOf(t, allowed.counterAdd(ref, "page", 3))
	errorOf(t, refused.counterAdd(ref, "page", 100), wire.CodeForbidden)
	errorOf(t, refused.counterGet(ref, "page"), wire.CodeForbidden)
	if v := counterOf(t, allowed.counterGet(ref, "page")); v.Sum != 3 {
		t.Fatalf("sum %d after a refused add", v.Sum)
	}
}
