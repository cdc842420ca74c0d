package producer

import (
	"github.com/felixbroker/felix/engine"
)

// Ack is the outcome of one batch: where it landed.
type Ack struct {
	Seq       uint64
	First     int64 // offset of the batch's first record on its shard
	Count     int   // records, at First onward
	Duplicate bool  // a re-send answered from memory: the batch had landed once already
}

// Waiter is told once what became of a batch. For a new batch, and for a
// re-send of one still pending, it runs on the shard log's committer when
// the original is acknowledged at the stream's durability; for a re-send
// of an acknowledged batch, on the caller's goroutine before Publish
// returns. It must not block and must not call the Manager.
type Waiter interface {
	Acked(a Ack, err error)
}

// Publish appends batch seq of producer id to one shard of s, unless the
// shard already holds it. The records must all be routed to that shard by
// their keys (engine.ErrWrongShard otherwise). Sequences start at 0 and
// count batches per producer and shard.
//
//   - seq is the next expected: appended; w is told when acknowledged.
//   - seq is below it and one of the last InFlightMax: a re-send; w is
//     told the original's acknowledgement (Duplicate set) and nothing is
//     appended.
//   - seq is older still: ErrSequenceStale.
//   - seq is above it: a *SequenceError naming the expected sequence.
//
// It returns an error, and tells w nothing, when the batch was refused:
// a non-leader or a shard not held here (*engine.NotLeaderError, asked
// before anything else), an unknown producer (ErrProducerUnknown), a
// sequence refused as above, ErrTooManyInFlight, or the shard log's own
// refusal. The check and the
// append are atomic per producer and shard: two re-sends of one batch
// arriving at once append it once.
func (m *Manager) Publish(id ID, s *engine.Stream, shard int, seq uint64, recs []engine.Record, w Waiter) error {
	if local, leader := m.owner.Leader(s.ID(), shard); !local {
		return &engine.NotLeaderError{Stream: s.ID(), Shard: shard, Leader: leader}
	}
	sh, err := s.Shard(shard)
	if err != nil {
		return err // engine.ErrNoShard, or a *NotLeaderError: the shard is not held here
	}
	m.watch(s, shard, sh)
	p := m.lookup(id, m.opts.Now().UnixNano())
	if p == nil {
		m.counters.unknown.Add(1)
		return ErrProducerUnknown
	}
	q := p.sequencer(shardKey{stream: s, shard: shard}, m.opts.InFlightMax)
	q.seqMu.Lock()
	defer q.seqMu.Unlock()
	if err := q.failure(); err != nil {
		m.counters.unknown.Add(1)
		return err
	}
	switch {
	case seq == q.next:
		return m.appendNext(q, s, shard, recs, w)
	case seq > q.next:
		m.counters.gaps.Add(1)
		return &SequenceError{Got: seq, Expected: q.next}
	}
	err = q.duplicate(seq, w)
	if err == nil {
		m.counters.duplicates.Add(1)
	} else if err == ErrSequenceStale {
		m.counters.stale.Add(1)
	}
	return err
}

// appendNext appends the expected batch; q.seqMu is held.
func (m *Manager) appendNext(q *sequencer, s *engine.Stream, shard int, recs []engine.Record, w Waiter) error {
	b, ok := q.arm(len(recs), w)
	if !ok {
		m.counters.inFlightRefused.Add(1)
		return ErrTooManyInFlight
	}
	if _, err := s.AppendToShard(shard, recs, b); err != nil {
		q.disarm(b)
		return err
	}
	q.next++
	m.counters.batches.Add(1)
	return nil
}
