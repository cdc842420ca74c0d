package netio

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/netio/wire"
)

func TestCacheFeaturesFollowTheStore(t *testing.T) {
	cases := []struct {
		name string
		b    func(t *testing.T) *testBroker
		want wire.Features
	}{
		{"no store", func(t *testing.T) *testBroker { return startBroker(t) }, 0},
		{"memory store", func(t *testing.T) *testBroker {
			return startCacheBroker(t, func(o *cache.Options, _ *Config) { o.FS, o.Dir = nil, "" }).testBroker
		}, wire.FeatureCache | wire.FeatureCacheWatch | wire.FeatureCacheWatchRetained},
		{"durable store", func(t *testing.T) *testBroker { return startCacheBroker(t).testBroker }, cacheFeaturesAll},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.b(t).dial()
			ok := c.hello(cacheFeaturesAll, nil)
			if got := ok.Features & cacheFeaturesAll; got != tc.want {
				t.Fatalf("features %v, want %v", got, tc.want)
			}
			ref := wire.CacheRef{Tenant: []byte("acme"), Namespace: []byte("prod"), Cache: []byte("c")}
			if !tc.want.Has(wire.FeatureCounters) {
				f := c.request(func(id uint64) []byte {
					return wire.AppendCounterGet(nil, id, wire.CounterGet{Cache: ref, Key: []byte("k")})
				})
				errorOf(t, f, wire.CodeFeatureNotNegotiated)
			}
			c.ping() // the connection goes on
		})
	}
}

func TestCacheFramesAnswerEveryOperation(t *testing.T) {
	b := startCacheBroker(t)
	c := b.client(cacheFeaturesAll)
	ref := wire.CacheRef{Tenant: []byte("acme"), Namespace: []byte("prod"), Cache: []byte("sessions")}
	if f := c.control(&wire.CacheCreate{Cache: ref, Config: wire.CacheConfig{Shards: 2, Durable: true}}); f.Type != wire.TypeOK {
		t.Fatalf("CACHE_CREATE: %v %v", f.Type, decodeErr(f))
	}
	errorOf(t, c.control(&wire.CacheCreate{Cache: ref}), wire.CodeAlreadyExists)

	if v := valueOf(t, c.get(ref, "k")); v.Found || v.Offset != 0 || len(v.Value) != 0 {
		t.Fatalf("a key never written: %+v", v)
	}
	w := writtenOf(t, c.put(wire.CachePut{Cache: ref, Key: []byte("k"), Value: []byte("v1")}))
	if w.Existed || w.ExpiresAt != 0 {
		t.Fatalf("first put: %+v", w)
	}
	if v := valueOf(t, c.get(ref, "k")); !v.Found || v.Offset != w.Offset || string(v.Value) != "v1" {
		t.Fatalf("get after put at %d: %+v", w.Offset, v)
	}
	w2 := writtenOf(t, c.put(wire.CachePut{Cache: ref, Key: []byte("k"), Value: []byte("v2")}))
	if !w2.Existed || w2.Offset != w.Offset+1 {
		t.Fatalf("second put: %+v after %+v", w2, w)
	}
	d := writtenOf(t, c.del(wire.CacheDelete{Cache: ref, Key: []byte("k")}))
	if !d.Existed || d.Offset != w2.Offset+1 {
		t.Fatalf("delete: %+v", d)
	}
	if v := valueOf(t, c.get(ref, "k")); v.Found {
		t.Fatalf("get after delete: %+v", v)
	}
	if d := writtenOf(t, c.del(wire.CacheDelete{Cache: ref, Key: []byte("k")})); d.Existed || int64(d.Offset) != -1 {
		t.Fatalf("a delete of nothing: %+v, want existed 0, offset -1", d)
	}
	if f := c.control(&wire.CacheDrop{Cache: ref}); f.Type != wire.TypeOK {
		t.Fatalf("CACHE_DROP: %v %v", f.Type, decodeErr(f))
	}
	errorOf(t, c.get(ref, "k"), wire.CodeNotFound)
	errorOf(t, c.control(&wire.CacheDrop{Cache: ref}), wire.CodeNotFound)
	if f := c.control(&wire.CacheCreate{Cache: ref, Config: wire.CacheConfig{Durable: true}}); f.Type != wire.TypeOK {
		t.Fatalf("CACHE_CREATE again: %v %v", f.Type, decodeErr(f))
	}
	if v := valueOf(t, c.get(ref, "k")); v.Found {
		t.Fatalf("a cache created again starts empty: %+v", v)
	}
}

func TestCacheCreateCarriesTheConfig(t *testing.T) {
	b := startCacheBroker(t)
	c := b.client(cacheFeaturesAll)
	ref := wire.CacheRef{Tenant: []byte("acme"), Namespace: []byte("prod"), Cache: []byte("c")}
	f := c.control(&wire.CacheCreate{Cache: ref, Config: wire.CacheConfig{Shards: 3, Durable: true,
		Fsync: wire.FsyncMode{Kind: wire.FsyncOnCommit}}})
	if f.Type != wire.TypeOK {
		t.Fatalf("%v %v", f.Type, decodeErr(f))
	}
	info := b.cache(ref).Info()
	if info.Config.Shards != 3 || !info.Config.Durable || info.Config.Fsync.Kind != "OnCommit" {
		t.Fatalf("config %+v", info.Config)
	}
	for _, bad := range []wire.CacheConfig{{Shards: 1 << 30}, {ReplicationFactor: 3}} {
		bad := bad
		ref2 := ref
		ref2.Cache = []byte("bad")
		errorOf(t, c.control(&wire.CacheCreate{Cache: ref2, Config: bad}), wire.CodeInvalidArgument)
	}
	e := errorOf(t, c.control(&wire.CacheCreate{Cache: wire.CacheRef{Tenant: []byte("acme"), Namespace: []byte("prod"), Cache: []byte("a/b")}}),
		wire.CodeInvalidArgument)
	if e.Details.Field != "cache" {
		t.Fatalf("an invalid name names the field %q", e.Details.Field)
	}
}

func TestAMemoryStoreRefusesADurableCache(t *testing.T) {
	b := startCacheBroker(t, func(o *cache.Options, _ *Config) { o.FS, o.Dir = nil, "" })
	c := b.client(cacheFeaturesAll)
	ref := wire.CacheRef{Tenant: []byte("acme"), Namespace: []byte("prod"), Cache: []byte("c")}
	e := errorOf(t, c.control(&wire.CacheCreate{Cache: ref, Config: wire.CacheConfig{Durable: true}}), wire.CodeInvalidArgument)
	if e.Details.Field != "config.durable" {
		t.Fatalf("field %q", e.Details.Field)
	}
}

func TestConditionalPutsOverTheWire(t *testing.T) {
	b := startCacheBroker(t)
	ref := b.createCache("c", cache.Config{Durable: true})
	c := b.client(cacheFeaturesAll)
	ifAbsent := wire.Condition{Kind: wire.CondIfAbsent}
	first := writtenOf(t, c.put(wire.CachePut{Cache: ref, Key: []byte("k"), Condition: ifAbsent, Value: []byte("a")}))
	e := errorOf(t, c.put(wire.CachePut{Cache: ref, Key: []byte("k"), Condition: ifAbsent, Value: []byte("b")}), wire.CodePreconditionFailed)
	if e.Details.Offset == nil || *e.Details.Offset != first.Offset {
		t.Fatalf("if absent over a value: details %+v, want offset %d", e.Details, first.Offset)
	}
	cas := writtenOf(t, c.put(wire.CachePut{Cache: ref, Key: []byte("k"), Condition: wire.Condition{Kind: wire.CondIfOffset, Offset: first.Offset},
		Value: []byte("c")}))
	e = errorOf(t, c.put(wire.CachePut{Cache: ref, Key: []byte("k"), Condition: wire.Condition{Kind: wire.CondIfOffset, Offset: first.Offset},
		Value: []byte("d")}), wire.CodePreconditionFailed)
	if *e.Details.Offset != cas.Offset {
		t.Fatalf("a stale compare-and-set names offset %d, want %d", *e.Details.Offset, cas.Offset)
	}
	e = errorOf(t, c.del(wire.CacheDelete{Cache: ref, Key: []byte("k"), Condition: wire.Condition{Kind: wire.CondIfOffset, Offset: first.Offset}}),
		wire.CodePreconditionFailed)
	if *e.Details.Offset != cas.Offset {
		t.Fatalf("a stale conditional delete names offset %d", *e.Details.Offset)
	}
	writtenOf(t, c.del(wire.CacheDelete{Cache: ref, Key: []byte("k"), Condition: wire.Condition{Kind: wire.CondIfOffset, Offset: cas.Offset}}))
	e = errorOf(t, c.put(wire.CachePut{Cache: ref, Key: []byte("k"), Condition: wire.Condition{Kind: wire.CondIfOffset, Offset: cas.Offset},
		Value: []byte("e")}), wire.CodePreconditionFailed)
	if e.Details.Offset != nil {
		t.Fatalf("a key with no value carries no offset: %+v", e.Details)
	}
	if v := valueOf(t, c.get(ref, "k")); v.Found {
		t.Fatalf("%+v", v)
	}
}

func TestTTLOverTheWireFollowsTheStoreClock(t *testing.T) {
	b := startCacheBroker(t)
	ref := b.createCache("c", cache.Config{Durable: true})
	c := b.client(cacheFeaturesAll)
	start := b.clock.Now()
	w := writtenOf(t, c.put(wire.CachePut{Cache: ref, Key: []byte("ttl"), Expiry: wire.Expiry{Kind: wire.ExpireAfter, TTLMillis: 1500},
		Value: []byte("v")}))
	if want := start.Add(1500 * time.Millisecond).UnixNano(); w.ExpiresAt != want {
		t.Fatalf("expires at %d, want %d", w.ExpiresAt, want)
	}
	at := start.Add(time.Hour).UnixNano()
	writtenOf(t, c.put(wire.CachePut{Cache: ref, Key: []byte("at"), Expiry: wire.Expiry{Kind: wire.ExpireAt, At: at}, Value: []byte("v")}))
	writtenOf(t, c.put(wire.CachePut{Cache: ref, Key: []byte("past"), Expiry: wire.Expiry{Kind: wire.ExpireAt, At: start.UnixNano() - 1},
		Value: []byte("v")}))
	if v := valueOf(t, c.get(ref, "past")); v.Found {
		t.Fatalf("a value whose expiry has passed: %+v", v)
	}
	b.clock.advance(1499 * time.Millisecond)
	if v := valueOf(t, c.get(ref, "ttl")); !v.Found || v.ExpiresAt != w.ExpiresAt {
		t.Fatalf("1 ms before its expiry: %+v", v)
	}
	b.clock.advance(time.Millisecond)
	if v := valueOf(t, c.get(ref, "ttl")); v.Found {
		t.Fatalf("at its expiry: %+v", v)
	}
	if v := valueOf(t, c.get(ref, "at")); !v.Found || v.ExpiresAt != at {
		t.Fatalf("absolute expiry: %+v", v)
	}
	b.clock.advance(time.Hour)
	if v := valueOf(t, c.get(ref, "at")); v.Found {
		t.Fatalf("after its absolute expiry: %+v", v)
	}
	if d := writtenOf(t, c.del(wire.CacheDelete{Cache: ref, Key: []byte("at")})); d.Existed {
		t.Fatalf("an expired value does not exist: %+v", d)
	}
}

func TestCacheRefusalsCarryStableCodes(t *testing.T) {
	b := startCacheBroker(t)
	ref := b.createCache("c", cache.Config{Durable: true})
	c := b.client(cacheFeaturesAll)
	missing := wire.CacheRef{Tenant: []byte("acme"), Namespace: []byte("prod"), Cache: []byte("nope")}
	big := bytes.Repeat([]byte("x"), wire.DefaultFrameBytesMax-watchEventOverheadMax)
	cases := []struct {
		name  string
		f     wire.Frame
		code  wire.Code
		field string
	}{
		{"get of a missing cache", c.get(missing, "k"), wire.CodeNotFound, ""},
		{"put to a missing cache", c.put(wire.CachePut{Cache: missing, Key: []byte("k")}), wire.CodeNotFound, ""},
		{"empty key", c.get(ref, ""), wire.CodeInvalidArgument, "key"},
		{"put of an empty key", c.put(wire.CachePut{Cache: ref}), wire.CodeInvalidArgument, "key"},
		{"ttl of 0", c.put(wire.CachePut{Cache: ref, Key: []byte("k"), Expiry: wire.Expiry{Kind: wire.ExpireAfter}}), wire.CodeInvalidArgument, "ttl"},
		{"negative expiry", c.put(wire.CachePut{Cache: ref, Key: []byte("k"), Expiry: wire.Expiry{Kind: wire.ExpireAt, At: -5}}),
			wire.CodeInvalidArgument, "expires_at"},
		{"value too large to watch", c.put(wire.CachePut{Cache: ref, Key: []byte("k"), Value: big}), wire.CodeLimitExceeded, ""},
		{"watch of a missing cache", c.control(&wire.CacheWatch{Cache: missing, Key: []byte("k")}), wire.CodeNotFound, ""},
		{"watch of a shard past the last", c.control(&wire.CacheWatch{Cache: ref, Prefix: true, Shard: 1}), wire.CodeInvalidArgument, "shard"},
		{"retained and resumed", c.control(&wire.CacheWatch{Cache: ref, Key: []byte("k"), Retained: true, ResumeOffset: wire.U64(0)}),
			wire.CodeInvalidArgument, "watch"},
		{"resume past the tail", c.control(&wire.CacheWatch{Cache: ref, Key: []byte("k"), ResumeOffset: wire.U64(7)}), wire.CodeOffsetPastTail, ""},
		{"unwatch of nothing", c.control(&wire.CacheUnwatch{WatchID: 99}), wire.CodeNotFound, ""},
		{"counter of a missing cache", c.request(func(id uint64) []byte {
			return wire.AppendCounterAdd(nil, id, wire.CounterAdd{Cache: missing, Key: []byte("k"), Delta: 1})
		}), wire.CodeNotFound, ""},
	}
	for _, tc := range cases {
		e := errorOf(t, tc.f, tc.code)
		if e.Details.Field != tc.field {
			t.Errorf("%s: field %q, want %q", tc.name, e.Details.Field, tc.field)
		}
	}
	c.ping()
}

func TestARetainedWatchNeedsTheRetainedFeature(t *testing.T) {
	b := startCacheBroker(t)
	ref := b.createCache("c", cache.Config{Durable: true})
	c := b.client(wire.FeatureCache | wire.FeatureCacheWatch)
	e := errorOf(t, c.control(&wire.CacheWatch{Cache: ref, Key: []byte("k"), Retained: true}), wire.CodeFeatureNotNegotiated)
	if e.Details.Feature != wire.FeatureCacheWatchRetained {
		t.Fatalf("missing %v", e.Details.Feature)
	}
	if st := c.watch(wire.CacheWatch{Cache: ref, Key: []byte("k")}); st.WatchID == 0 {
		t.Fatalf("a plain watch on the same session: %+v", st)
	}
}

// elsewhere leads no shard of any cache: every shard's leader is "b2".
type elsewhere struct{}

func (elsewhere) Leader(engine.StreamID, int) (bool, string) { return false, "10.0.0.2:7117" }

func TestAReadThisBrokerCannotRouteIsAnErrorNotAMiss(t *testing.T) {
	b := startCacheBroker(t, func(o *cache.Options, cfg *Config) { o.Owner, cfg.Owner = elsewhere{}, elsewhere{} })
	ref := b.createCache("c", cache.Config{Durable: true, Shards: 2})
	c := b.client(cacheFeaturesAll)
	for name, f := range map[string]wire.Frame{
		"get":   c.get(ref, "k"),
		"put":   c.put(wire.CachePut{Cache: ref, Key: []byte("k"), Value: []byte("v")}),
		"del":   c.del(wire.CacheDelete{Cache: ref, Key: []byte("k")}),
		"watch": c.control(&wire.CacheWatch{Cache: ref, Prefix: true, Shard: 1}),
		"counter get": c.request(func(id uint64) []byte {
			return wire.AppendCounterGet(nil, id, wire.CounterGet{Cache: ref, Key: []byte("k")})
		}),
		"counter add": c.request(func(id uint64) []byte {
			return wire.AppendCounterAdd(nil, id, wire.CounterAdd{Cache: ref, Key: []byte("k"), Delta: 1})
		}),
	} {
		e := decodeErr(f)
		if e == nil || e.Code != wire.CodeNotLeader || e.Details.LeaderAddr != "10.0.0.2:7117" || e.Details.Shard == nil {
			t.Errorf("%s: %v %+v", name, f.Type, e)
		}
	}
}

// refuseCaches is a principal that may do everything but touch caches.
type refuseCaches struct{}

var errNoCaches = errors.New("no caches for you")

func (refuseCaches) Allow(a Action, _ Resource) error {
	switch a {
	case ActionCacheRead, ActionCacheWrite, ActionCacheCreate, ActionCacheDrop, ActionCounter:
		return errNoCaches
	}
	return nil
}

type refuseCachesAuth struct{}

func (refuseCachesAuth) Authenticate([]byte) (Principal, error) { return refuseCaches{}, nil }

func TestAForbiddenCacheOperationDoesNotSayWhetherTheCacheExists(t *testing.T) {
	b := startCacheBroker(t, func(_ *cache.Options, cfg *Config) { cfg.Authenticator = refuseCachesAuth{} })
	ref := b.createCache("c", cache.Config{Durable: true})
	missing := ref
	missing.Cache = []byte("nope")
	c := b.client(cacheFeaturesAll)
	for _, r := range []wire.CacheRef{ref, missing} {
		errorOf(t, c.get(r, "k"), wire.CodeForbidden)
		errorOf(t, c.put(wire.CachePut{Cache: r, Key: []byte("k")}), wire.CodeForbidden)
		errorOf(t, c.control(&wire.CacheWatch{Cache: r, Key: []byte("k")}), wire.CodeForbidden)
		errorOf(t, c.control(&wire.CacheDrop{Cache: r}), wire.CodeForbidden)
		errorOf(t, c.request(func(id uint64) []byte {
			return wire.AppendCounterGet(nil, id, wire.CounterGet{Cache: r, Key: []byte("k")})
		}), wire.CodeForbidden)
	}
	errorOf(t, c.control(&wire.CacheCreate{Cache: missing}), wire.CodeForbidden)
}

// A cache dropped and created again behind the server's back (through the
// store, not CACHE_DROP) leaves the server a stale handle: the first
// operation that finds it dropped resolves the name again and is served by
// the new cache, on the loop and on a worker alike.
func TestACacheDroppedAndCreatedBehindTheServersBackIsServedAgain(t *testing.T) {
	b := startCacheBroker(t)
	ref := b.createCache("c", cache.Config{Durable: true})
	c := b.client(cacheFeaturesAll)
	c.mustPut(ref, "k", "old")
	counterOf(t, c.counterAdd(ref, "n", 3))
	recreate := func() {
		id := cacheIDOf(ref)
		if err := b.store.Drop(id); err != nil {
			t.Fatal(err)
		}
		if _, err := b.store.Create(id, cache.Config{Durable: true}); err != nil {
			t.Fatal(err)
		}
	}
	recreate()
	if v := valueOf(t, c.get(ref, "k")); v.Found {
		t.Fatalf("a get from the new cache: %+v", v)
	}
	recreate()
	if v := counterOf(t, c.counterGet(ref, "n")); v.Exists {
		t.Fatalf("a counter of the new cache: %+v", v)
	}
	recreate()
	if w := writtenOf(t, c.put(wire.CachePut{Cache: ref, Key: []byte("k"), Value: []byte("new")})); w.Existed || w.Offset != 0 {
		t.Fatalf("a put to the new cache: %+v", w)
	}
	if v := valueOf(t, c.get(ref, "k")); !v.Found || string(v.Value) != "new" {
		t.Fatalf("%+v", v)
	}
	recreate()
	st := c.watch(wire.CacheWatch{Cache: ref, Key: []byte("k")})
	off := b.client(cacheFeaturesAll).mustPut(ref, "k", "watched")
	if ev := c.watchEvents(st.WatchID, 1)[0]; ev.Offset != off {
		t.Fatalf("a watch of the new cache: %+v", ev)
	}
}
