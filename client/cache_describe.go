package client

import (
	"context"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// CacheShardInfo is one shard of a cache as the answering broker knows
// it: its leader (empty while it has none or the broker does not know
// it) and, in a cluster, the assignment's replicas and generation.
type CacheShardInfo struct {
	Shard      int
	LeaderID   string
	LeaderAddr string
	Replicas   []string // broker ids, the leader included
	Generation uint64
}

// CacheInfo is a cache with its settings and shards, in shard order.
type CacheInfo struct {
	Name   CacheName
	Config CacheConfig
	Shards []CacheShardInfo
}

// Describe returns the cache's settings and the leader of each of its
// shards (CACHE_DESCRIBE; ErrNotFound for a cache the broker does not
// know). A broker that does not serve it (FeatureCacheDescribe not
// negotiated) is not asked: the error matches ErrFeatureNotNegotiated and
// nothing was sent.
func (ca *Cache) Describe(ctx context.Context) (CacheInfo, error) {
	s, err := ca.client.Session(ctx)
	if err != nil {
		return CacheInfo{}, err
	}
	if !s.Features.Has(FeatureCacheDescribe) {
		return CacheInfo{}, notNegotiated(wire.FeatureCacheDescribe)
	}
	var info wire.CacheInfo
	if err := ca.client.roundTrip(ctx, &wire.CacheDescribe{Cache: ca.name.ref()}, &info); err != nil {
		return CacheInfo{}, err
	}
	return cacheInfoFrom(&info), nil
}

func cacheInfoFrom(w *wire.CacheInfo) CacheInfo {
	info := CacheInfo{
		Name: CacheName{Tenant: string(w.Cache.Tenant), Namespace: string(w.Cache.Namespace), Name: string(w.Cache.Cache)},
		Config: CacheConfig{Shards: int(w.Config.Shards), ReplicationFactor: int(w.Config.ReplicationFactor), InMemory: !w.Config.Durable,
			Fsync:       Fsync{Kind: FsyncKind(w.Config.Fsync.Kind), Interval: time.Duration(w.Config.Fsync.IntervalMillis) * time.Millisecond},
			Consistency: Consistency(w.Config.Consistency)},
	}
	for _, sh := range w.Shards {
		info.Shards = append(info.Shards, CacheShardInfo{Shard: int(sh.Shard), LeaderID: sh.LeaderID,
			LeaderAddr: sh.LeaderAddr, Replicas: sh.Replicas, Generation: sh.Generation})
	}
	return info
}
