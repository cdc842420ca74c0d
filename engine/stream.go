package engine

import (
	"github.com/zeebo/xxh3"
)

// Stream is an open stream: its catalog entry and its shards.
type Stream struct {
	engine *Engine
	info   StreamInfo
	shards []*Shard
}

// Info is the stream's catalog entry.
func (s *Stream) Info() StreamInfo { return s.info }

// ID is the stream's name.
func (s *Stream) ID() StreamID { return s.info.ID }

// Shards is the number of shards.
func (s *Stream) Shards() int { return len(s.shards) }

// Shard returns shard i, or ErrNoShard.
func (s *Stream) Shard(i int) (*Shard, error) {
	if i < 0 || i >= len(s.shards) {
		return nil, ErrNoShard
	}
	return s.shards[i], nil
}

// ShardFor is the shard a routing key chooses: xxh3(key) mod shards, and
// shard 0 for no key. A key always resolves to the same shard while the
// shard count stays the same.
func (s *Stream) ShardFor(key []byte) int { return ShardFor(key, len(s.shards)) }

// ShardFor is the routing rule, for clients and tools that route alone.
func ShardFor(key []byte, shards int) int {
	if len(key) == 0 || shards <= 1 {
		return 0
	}
	return int(xxh3.Hash(key) % uint64(shards))
}
