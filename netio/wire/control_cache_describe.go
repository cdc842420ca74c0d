package wire

// CacheDescribe asks for a cache's settings and the leader of each of its
// shards, so that a client can send each key to its owner (ShardFor) rather
// than through a broker that forwards it. The answer is CACHE_INFO, or
// ERROR not_found. It needs FeatureCacheDescribe.
type CacheDescribe struct {
	Cache CacheRef `json:"cache"`
}

// CacheShardInfo is one shard of a cache as the answering broker knows it:
// its leader (id and client address, empty while it has none or it is
// unknown) and, in a cluster, the generation and replicas the assignment
// names.
type CacheShardInfo struct {
	Shard      uint32   `json:"shard"`
	LeaderID   string   `json:"leader_id,omitempty"`
	LeaderAddr string   `json:"leader_addr,omitempty"`
	Replicas   []string `json:"replicas,omitempty"` // broker ids, leader included
	Generation uint64   `json:"generation"`
}

// CacheInfo answers CACHE_DESCRIBE: one entry per shard, in shard order.
type CacheInfo struct {
	Cache  CacheRef         `json:"cache"`
	Config CacheConfig      `json:"config"`
	Shards []CacheShardInfo `json:"shards"`
}

func (*CacheDescribe) FrameType() Type { return TypeCacheDescribe }
func (*CacheInfo) FrameType() Type     { return TypeCacheInfo }

func (m *CacheDescribe) check(l Limits) error { return l.CheckCacheRef(m.Cache) }
func (m *CacheInfo) check(l Limits) error {
	return firstErr(l.CheckCacheRef(m.Cache), m.Config.check())
}
