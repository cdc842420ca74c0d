package netio

import (
	"math"

	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/netio/wire"
)

func init() {
	frameHandlers[wire.TypeCacheDescribe] = (*conn).cacheDescribe
}

// cacheDescribe handles CACHE_DESCRIBE: the cache's settings and each
// shard's leader, as STREAM_DESCRIBE names a stream's, so a client can
// send a key to its owner. A principal that may read the cache may ask
// (it is what a get needs to be routed), and one that may not is told
// nothing about whether the cache exists. It reads memory and answers at
// once. Loop only.
func (c *conn) cacheDescribe(f wire.Frame) {
	var m wire.CacheDescribe
	if err := wire.DecodeControl(f, c.s.cfg.Limits, &m); err != nil {
		c.answer(f.RequestID, toWire(err))
		return
	}
	h, err := c.s.caches.handle(m.Cache)
	if err != nil {
		if aerr := c.principal.Allow(ActionCacheRead, refResource(m.Cache)); aerr != nil {
			c.answer(f.RequestID, refusal(aerr, wire.CodeForbidden))
			return
		}
		c.answer(f.RequestID, cacheToWire(err))
		return
	}
	if err := c.principal.Allow(ActionCacheRead, h.res); err != nil {
		c.answer(f.RequestID, refusal(err, wire.CodeForbidden))
		return
	}
	c.sendControl(f.RequestID, c.s.cacheInfo(h))
}

// cacheInfo describes a cache's shards as streamInfo does a stream's: a
// shard this broker leads names this broker; another names the leader the
// Owner knows (its client address) and the forwarder's Router (its id); in
// a cluster the generation and replicas are the store's assignment (the
// View's, asked under the cache's ownership id).
func (s *Server) cacheInfo(h *cacheHandle) *wire.CacheInfo {
	info := h.c.Info()
	out := &wire.CacheInfo{Cache: wireCacheRef(info.ID), Config: wireCacheConfig(info.Config)}
	for i := range h.c.Shards() {
		si := wire.CacheShardInfo{Shard: uint32(i)}
		if local, leader := s.cfg.Owner.Leader(h.owner, i); local {
			si.LeaderID, si.LeaderAddr, si.Replicas = s.cfg.BrokerID, s.advAddr, []string{s.cfg.BrokerID}
		} else {
			si.LeaderAddr, si.LeaderID = leader, s.leaderBroker(h.owner, i)
		}
		if p, ok := s.cfg.Owner.(shardReplicas); ok {
			if gen, replicas, ok := p.ShardReplicas(h.owner, i); ok {
				si.Generation, si.Replicas = gen, replicas
			}
		}
		out.Shards = append(out.Shards, si)
	}
	return out
}

func wireCacheRef(id cache.ID) wire.CacheRef {
	return wire.CacheRef{Tenant: []byte(id.Tenant), Namespace: []byte(id.Namespace), Cache: []byte(id.Name)}
}

// wireCacheConfig is the store's config as CACHE_INFO carries it.
func wireCacheConfig(c cache.Config) wire.CacheConfig {
	return wire.CacheConfig{Shards: uint32(c.Shards), ReplicationFactor: uint32(c.ReplicationFactor), Durable: c.Durable,
		Fsync: wire.FsyncMode{Kind: wire.FsyncKind(c.Fsync.Kind),
			IntervalMillis: uint32(min(c.Fsync.Interval.Milliseconds(), math.MaxUint32))},
		Consistency: wire.Consistency(c.Consistency)}
}
