package producer

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/felixbroker/felix/engine"
)

// producer is one issued ID and its sequencers, one per shard it writes.
type producer struct {
	id       uint64
	lastUsed atomic.Int64 // unix ns of the last batch or registration

	mu     sync.Mutex // guards shards
	shards []shardSeq
}

// shardKey names a shard by its open stream, so a stream deleted and
// created again under the same name starts from nothing.
type shardKey struct {
	stream *engine.Stream
	shard  int
}

type shardSeq struct {
	key shardKey
	seq *sequencer
}

// sequencer finds or creates the producer's sequencer for a shard. A
// producer writes few shards, so a slice searched in order beats a map in
// both time and memory.
func (p *producer) sequencer(key shardKey, inFlight int) *sequencer {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.shards {
		if p.shards[i].key == key {
			return p.shards[i].seq
		}
	}
	q := newSequencer(inFlight)
	p.shards = append(p.shards, shardSeq{key: key, seq: q})
	return q
}

// forget makes the producer unknown on one shard. The sequencer stays, so
// the producer is not mistaken for one starting there afresh at 0.
func (p *producer) forget(key shardKey) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.shards {
		if p.shards[i].key == key {
			p.shards[i].seq.fail(errForgotten)
			return
		}
	}
}

var errForgotten = fmt.Errorf("%w: this broker stopped leading the shard since", ErrProducerUnknown)
