package wire

import "github.com/zeebo/xxh3"

// ShardFor is the protocol's routing rule: the shard a routing key chooses
// on a stream or cache of shards shards is xxh3(key) mod shards, and shard
// 0 for no key (or one shard). A broker places keyed records and cache
// keys by it and a client that routes alone computes the same, so it is
// frozen with the protocol: changing it moves every key.
func ShardFor(key []byte, shards int) int {
	if len(key) == 0 || shards <= 1 {
		return 0
	}
	return int(xxh3.Hash(key) % uint64(shards))
}
