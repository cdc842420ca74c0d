package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// ErrUnknownOutcome matches an *UnknownOutcomeError: a Producer gave up on
// a batch that may or may not have landed.
var ErrUnknownOutcome = errors.New("felix/client: the batch may or may not have landed")

// UnknownOutcomeError reports a batch a Producer sent, lost the answer
// to, and could not re-send to a broker that remembered it: the broker
// restarted, or the shard moved to another (a new leader knows no
// producers), or the Producer gave up first (its context ended, or its
// retries ran out). The batch may have landed once or not at all; it
// never landed twice. Err is the last failure. The Producer starts again
// on that shard with a new id.
type UnknownOutcomeError struct {
	Stream   Stream
	Shard    int
	Sequence uint64
	Err      error
}

func (e *UnknownOutcomeError) Error() string {
	return fmt.Sprintf("felix/client: batch %d of a producer on %s shard %d may or may not have landed: %v",
		e.Sequence, e.Stream, e.Shard, e.Err)
}

// Unwrap matches ErrUnknownOutcome and the last failure, except
// ErrNotSent: a send of the batch may have landed, so it is Ambiguous even
// when the last try was not sent.
func (e *UnknownOutcomeError) Unwrap() []error {
	return []error{ErrUnknownOutcome, &unsureError{err: e.Err}}
}

// Producer publishes idempotently to one stream: it takes a producer id
// from the shard's broker and numbers its batches per shard, so a batch
// whose acknowledgement was lost is sent again and lands once. The broker
// answers a re-sent batch it already holds from memory (ProducerAck.
// Duplicate) instead of appending it a second time.
//
// That is the difference from PublishBatchAtLeastOnce, which re-sends a
// plain batch and can store it twice. A Producer cannot always vouch
// either: the broker keeps producers in memory, so a batch in flight
// across a broker restart (or a failover) cannot be matched any more. It
// is then reported as an *UnknownOutcomeError rather than landed a second
// time or dropped silently. The consumer side is unchanged: a subscriber
// or a group may still see a record twice on redelivery.
//
// One batch per shard is in flight at a time (a shard's batches are sent
// in order and each waits for its acknowledgement); use one Producer per
// writer and shards for more. Safe for concurrent use. Re-sends follow the
// Client's RetryPolicy.
type Producer struct {
	c      *Client
	stream Stream
	// cluster, when set, chooses each attempt's broker (the shard's
	// leader) and learns from each failure; c is then nil.
	cluster *ClusterClient

	mu     sync.Mutex // guards shards
	shards map[uint32]*producerShard
}

// producerShard is a producer's state on one shard. mu is held through a
// batch, its re-sends included.
type producerShard struct {
	mu    sync.Mutex
	ready bool // id and epoch were issued by the broker serving the shard
	id    uint64
	epoch uint32
	next  uint64 // the next batch's sequence
}

// Producer returns an idempotent producer for stream. Nothing is sent
// until its first batch.
func (c *Client) Producer(stream Stream) *Producer {
	return &Producer{c: c, stream: stream, shards: map[uint32]*producerShard{}}
}

// ProducerAck says where a batch landed.
type ProducerAck struct {
	Shard       int
	FirstOffset int64 // the batch's records are at FirstOffset, FirstOffset+1, ...
	Count       uint32
	ProducerID  uint64
	Sequence    uint64
	// Duplicate: the broker already held the batch (an earlier send landed
	// and its answer was lost) and answered from memory.
	Duplicate bool
}

// ShardFor is the shard a routing key chooses on a stream or cache of
// shards shards: xxh3(key) mod shards, and shard 0 for no key. It is the
// protocol's rule (wire.ShardFor), the one the brokers apply.
func ShardFor(key []byte, shards int) int { return wire.ShardFor(key, shards) }

// PublishBatch publishes records as one batch to one shard and waits for
// its acknowledgement, re-sending it (same sequence) after a failure
// whose outcome is unknown, under the Client's RetryPolicy. Every record's
// key must choose that shard (ShardFor; a record without a key belongs to
// shard 0): the broker refuses the batch otherwise (ErrInvalidArgument).
//
// It returns a refusal that appended nothing as a *ServerError, as
// Publish does, and a batch it could not settle as an
// *UnknownOutcomeError. The records are copied before it returns.
func (p *Producer) PublishBatch(ctx context.Context, shard int, records []Record) (ProducerAck, error) {
	if len(records) == 0 {
		return ProducerAck{}, ErrEmptyBatch
	}
	ps := p.shard(uint32(shard))
	ps.mu.Lock()
	defer ps.mu.Unlock()
	sc := batchOf(records)
	defer putScratch(sc)
	b := &batchSend{p: p, ps: ps, shard: uint32(shard), recs: *sc}
	return b.run(ctx)
}

func (p *Producer) shard(shard uint32) *producerShard {
	p.mu.Lock()
	defer p.mu.Unlock()
	ps := p.shards[shard]
	if ps == nil {
		ps = &producerShard{}
		p.shards[shard] = ps
	}
	return ps
}

// batchSend is one batch's way to its acknowledgement. Its shard's mu is
// held throughout.
type batchSend struct {
	p     *Producer
	ps    *producerShard
	shard uint32
	recs  []wire.Record
	// mayHaveLanded: an earlier send of this batch failed after it left,
	// with an outcome that could not be known.
	mayHaveLanded bool
	seq           uint64
	reinits       int // producer ids taken again for this batch
}

// run sends the batch until it is acknowledged, refused, or gives up.
func (b *batchSend) run(ctx context.Context) (ProducerAck, error) {
	o := b.p.opts()
	start := time.Now()
	var r *retrier // made at the first failure: a batch that lands at once allocates none
	for {
		ack, err := b.attempt(ctx)
		if err == nil {
			b.ps.next++
			return ack, nil
		}
		if r == nil {
			r = newRetrier(o.retry, o.randN, start)
		}
		done, again, err := b.settled(ctx, err)
		if done {
			return ProducerAck{}, err
		}
		if again {
			continue
		}
		wait, stop := r.next(err, time.Now())
		if stop == nil {
			stop = sleep(ctx, wait)
		}
		if stop != nil {
			return ProducerAck{}, b.giveUp(stop)
		}
	}
}

// attempt sends the batch once, taking a producer id first if the shard
// has none.
func (b *batchSend) attempt(ctx context.Context) (ProducerAck, error) {
	c, err := b.p.client(ctx, b.shard)
	if err != nil {
		return ProducerAck{}, err
	}
	if !b.ps.ready {
		if err := b.p.init(ctx, c, b.shard, b.ps); err != nil {
			b.p.learn(c, b.shard, err)
			return ProducerAck{}, err
		}
	}
	if !b.mayHaveLanded {
		b.seq = b.ps.next
	}
	ack, sent, err := b.p.send(ctx, c, b.shard, b.ps, b.seq, b.recs)
	if err != nil && sent && Ambiguous(err) {
		b.mayHaveLanded = true
	}
	b.p.learn(c, b.shard, err)
	return ack, err
}

// opts are the options the Producer's retries follow.
func (p *Producer) opts() *options {
	if p.cluster != nil {
		return &p.cluster.opts
	}
	return &p.c.opts
}

// client is the Client an attempt on shard goes to: the single broker's,
// or in a cluster the shard's leader's (the broker in use when it is not
// known).
func (p *Producer) client(ctx context.Context, shard uint32) (*Client, error) {
	if p.cluster == nil {
		return p.c, nil
	}
	t := toShard(p.stream, int(shard))
	return p.cluster.connect(ctx, p.cluster.leader(ctx, t))
}

// learn tells a cluster what an attempt's failure at c says: a not_leader
// names the shard's leader for the next attempt, a lost connection
// forgets its routes.
func (p *Producer) learn(c *Client, shard uint32, err error) {
	if p.cluster != nil && err != nil {
		p.cluster.learn(toShard(p.stream, int(shard)), &fromBroker{addr: c.addr, err: err})
	}
}

// settled decides whether a failed attempt ends the batch, or is tried
// again at once: a producer the broker no longer knows ends it as an
// unknown outcome after a send that may have landed, and before one the
// batch is sent again under a new id (once: a broker that forgets a fresh
// id at once is refused); a sequence the broker does not expect, and a
// context that ended, end it.
func (b *batchSend) settled(ctx context.Context, err error) (done, again bool, _ error) {
	switch {
	case errors.Is(err, ErrProducerUnknown):
		b.ps.ready = false
		if b.mayHaveLanded {
			return true, false, b.unknown(err)
		}
		b.reinits++
		return b.reinits > 1, true, err
	case errors.Is(err, ErrSequenceGap):
		b.ps.ready = false // the numbering is no longer the broker's
		if b.mayHaveLanded {
			return true, false, b.unknown(err)
		}
		return true, false, err
	case ctx.Err() != nil:
		return true, false, b.giveUp(err)
	}
	return false, false, err
}

// giveUp ends the batch on err: an unknown outcome if a send may have
// landed (the shard then starts again under a new id, since the broker may
// or may not have taken the sequence).
func (b *batchSend) giveUp(err error) error {
	if b.mayHaveLanded {
		b.ps.ready = false
		return b.unknown(err)
	}
	return err
}

func (b *batchSend) unknown(err error) error {
	return &UnknownOutcomeError{Stream: b.p.stream, Shard: int(b.shard), Sequence: b.seq, Err: err}
}

// init takes a producer id for the shard from the broker serving it.
func (p *Producer) init(ctx context.Context, c *Client, shard uint32, ps *producerShard) error {
	var ok wire.ProducerInitOK
	s, err := c.Session(ctx)
	if err != nil {
		return err
	}
	if !s.Features.Has(FeatureIdempotentProducers) {
		return notNegotiated(wire.FeatureIdempotentProducers)
	}
	if err := c.roundTrip(ctx, &wire.ProducerInit{Stream: p.stream.ref(), Shard: shard}, &ok); err != nil {
		return err
	}
	ps.ready, ps.id, ps.epoch, ps.next = true, ok.ProducerID, ok.Epoch, 0
	return nil
}

// send sends batch seq once and waits for its answer. sent reports whether
// the frame was handed to the connection (so a failure after it may have
// landed).
func (p *Producer) send(ctx context.Context, c *Client, shard uint32, ps *producerShard, seq uint64, recs []wire.Record) (ProducerAck, bool, error) {
	cn, err := c.conn(ctx)
	if err != nil {
		return ProducerAck{}, false, err
	}
	if !cn.features.Has(wire.FeatureIdempotentProducers) {
		return ProducerAck{}, false, notNegotiated(wire.FeatureIdempotentProducers)
	}
	ref := p.stream.ref()
	if err := checkPublish(cn.limits, ref, recs); err != nil {
		return ProducerAck{}, false, err
	}
	ps2 := wire.ProducerSeq{Shard: shard, ProducerID: ps.id, Epoch: ps.epoch, Sequence: seq}
	cl := newCall(true)
	buf, err := cn.beginRequest(ctx, cl)
	if err != nil {
		cl.recycle()
		return ProducerAck{}, false, err
	}
	start := len(buf)
	buf = wire.AppendPublishFor(buf, cn.features, cl.id, ref, wire.AckPerBatch, &ps2, recs)
	if err := cn.limits.CheckFrameSize(len(buf) - start); err != nil {
		cn.w.abort(buf[:start])
		cn.drop(cl)
		cl.recycle()
		return ProducerAck{}, false, localError(err)
	}
	cn.w.commit(buf)
	if abandoned, err := cl.wait(ctx); err != nil {
		if !abandoned {
			cl.recycle()
		}
		return ProducerAck{}, true, err
	}
	defer cl.recycle()
	return idempotentAckOf(cl, ps2)
}

func idempotentAckOf(cl *call, want wire.ProducerSeq) (ProducerAck, bool, error) {
	if cl.ftype != wire.TypePublishIdempotentAck {
		return ProducerAck{}, true, fmt.Errorf("%w: %v in answer to PUBLISH_IDEMPOTENT", ErrProtocol, cl.ftype)
	}
	var a wire.IdempotentAck
	if err := a.Decode(wire.Frame{Type: cl.ftype, Body: cl.body}, wire.Limits{}); err != nil {
		return ProducerAck{}, true, fmt.Errorf("%w: PUBLISH_IDEMPOTENT_ACK: %w", ErrProtocol, err)
	}
	if a.ProducerSeq != want {
		return ProducerAck{}, true, fmt.Errorf("%w: PUBLISH_IDEMPOTENT_ACK for %+v answers %+v", ErrProtocol, a.ProducerSeq, want)
	}
	return ProducerAck{Shard: int(a.Shard), FirstOffset: int64(a.FirstOffset), Count: a.Count, ProducerID: a.ProducerID,
		Sequence: a.Sequence, Duplicate: a.Duplicate}, true, nil
}
