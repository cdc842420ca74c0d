package netio

import (
	"testing"
	"time"

	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/netio/wire"
)

const describeFeatures = cacheFeaturesAll | wire.FeatureCacheDescribe

// A single broker leads every shard of its caches: CACHE_INFO names it
// for each, with the cache's settings.
func TestCacheDescribeNamesEachShardsLeader(t *testing.T) {
	b := startCacheBroker(t)
	ref := b.createCache("sessions", cache.Config{Shards: 3, Durable: true})
	c := b.client(describeFeatures)
	f := c.control(&wire.CacheDescribe{Cache: ref})
	var info wire.CacheInfo
	if f.Type != wire.TypeCacheInfo || wire.DecodeControl(f, wire.Limits{}, &info) != nil {
		t.Fatalf("CACHE_DESCRIBE answered %v %v", f.Type, decodeErr(f))
	}
	if info.Config.Shards != 3 || !info.Config.Durable || len(info.Shards) != 3 {
		t.Fatalf("info %+v", info)
	}
	for i, sh := range info.Shards {
		if sh.Shard != uint32(i) || sh.LeaderID != b.s.cfg.BrokerID || sh.LeaderAddr == "" {
			t.Fatalf("shard %d: %+v, want this broker as its leader", i, sh)
		}
	}
	missing := ref
	missing.Cache = []byte("nope")
	errorOf(t, c.control(&wire.CacheDescribe{Cache: missing}), wire.CodeNotFound)
}

// Describing needs cache.read, and a refusal says nothing of existence.
func TestCacheDescribeNeedsCacheRead(t *testing.T) {
	b, sg := startAuthCacheBroker(t)
	ref := b.createCache("sessions", cache.Config{Durable: true})
	missing := ref
	missing.Cache = []byte("nope")
	writer := b.dial()
	writer.hello(describeFeatures, sg.token("acme", time.Hour, "cache.write:prod/*"))
	for _, r := range []wire.CacheRef{ref, missing} {
		errorOf(t, writer.control(&wire.CacheDescribe{Cache: r}), wire.CodeForbidden)
	}
	reader := b.dial()
	reader.hello(describeFeatures, sg.token("acme", time.Hour, "cache.read:prod/sessions"))
	if f := reader.control(&wire.CacheDescribe{Cache: ref}); f.Type != wire.TypeCacheInfo {
		t.Fatalf("a reader's describe: %v %v", f.Type, decodeErr(f))
	}
}

// A session that did not negotiate the bit is refused before the frame
// is read, as every optional frame is.
func TestCacheDescribeNeedsItsFeature(t *testing.T) {
	b := startCacheBroker(t)
	ref := b.createCache("sessions", cache.Config{Durable: true})
	e := errorOf(t, b.client(cacheFeaturesAll).control(&wire.CacheDescribe{Cache: ref}), wire.CodeFeatureNotNegotiated)
	if e.Details.Feature != wire.FeatureCacheDescribe {
		t.Fatalf("missing feature %v", e.Details.Feature)
	}
}
