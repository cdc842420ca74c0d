package client

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/felixbroker/felix/netio/wire"
)

var testCache = CacheName{Tenant: "acme", Namespace: "prod", Name: "sessions"}

// describingHandler answers CACHE_DESCRIBE with a cache of two shards,
// the second without a leader, and counts the describes it was sent.
func describingHandler(describes *atomic.Int64) func(fc *fakeConn, f wire.Frame) {
	return func(fc *fakeConn, f wire.Frame) {
		if f.Type != wire.TypeCacheDescribe {
			fc.fail(f.RequestID, wire.CodeInvalidArgument, "unexpected", wire.Details{})
			return
		}
		describes.Add(1)
		info := wire.CacheInfo{Cache: testCache.ref(), Config: wire.CacheConfig{Shards: 2, ReplicationFactor: 3, Durable: true},
			Shards: []wire.CacheShardInfo{
				{Shard: 0, LeaderID: "b1", LeaderAddr: "10.0.0.1:7117", Replicas: []string{"b1", "b2", "b3"}, Generation: 4},
				{Shard: 1, Replicas: []string{"b2", "b3", "b1"}, Generation: 2}}}
		fc.sendWith(func(dst []byte) []byte { return wire.AppendControl(dst, f.RequestID, &info) })
	}
}

func TestDescribeNamesEachShardsLeader(t *testing.T) {
	var describes atomic.Int64
	b := newFakeBroker(t, describingHandler(&describes))
	info, err := dialFake(t, b).Cache(testCache).Describe(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != testCache || info.Config.Shards != 2 || info.Config.ReplicationFactor != 3 || info.Config.InMemory ||
		len(info.Shards) != 2 {
		t.Fatalf("info %+v", info)
	}
	if sh := info.Shards[0]; sh.Shard != 0 || sh.LeaderID != "b1" || sh.LeaderAddr != "10.0.0.1:7117" || sh.Generation != 4 || len(sh.Replicas) != 3 {
		t.Fatalf("shard 0: %+v", sh)
	}
	if sh := info.Shards[1]; sh.Shard != 1 || sh.LeaderAddr != "" || sh.Generation != 2 {
		t.Fatalf("shard 1: %+v, want no leader", sh)
	}
}

// A broker that does not offer FEATURE_CACHE_DESCRIBE would close the
// connection on the frame: the client does not send it.
func TestDescribeIsNotSentToABrokerWithoutIt(t *testing.T) {
	var describes atomic.Int64
	b := newFakeBroker(t, describingHandler(&describes))
	b.features = wire.FeaturesAll &^ wire.FeatureCacheDescribe
	_, err := dialFake(t, b).Cache(testCache).Describe(testCtx(t))
	if !errors.Is(err, ErrFeatureNotNegotiated) || Ambiguous(err) || describes.Load() != 0 {
		t.Fatalf("describe: %v (%d sent), want feature_not_negotiated and nothing sent", err, describes.Load())
	}
}
