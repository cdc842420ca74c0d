package producer

import (
	"fmt"
	"sync"
)

// sequencer is one producer on one shard: the sequence it must send next
// and the outcomes of its last batches, in a ring indexed by sequence.
//
// seqMu is held from the sequence check through the append, so two
// batches of the producer on the shard, re-sends included, are checked and
// appended one at a time, in the shard's append order. ackMu (a leaf
// lock, taken after seqMu) guards the ring's outcomes: the log's committer
// takes it alone to record an acknowledgement, never seqMu, since an
// appender holding seqMu may be waiting for the committer to free buffer
// room.
type sequencer struct {
	seqMu sync.Mutex
	next  uint64 // the sequence the producer must send next

	ackMu  sync.Mutex
	ring   []batch
	failed error // the log failed one of its batches: the producer is unknown here
}

type batchState uint8

const (
	batchEmpty   batchState = iota // never used, or its append was refused
	batchPending                   // appended, not yet acknowledged
	batchAcked                     // acknowledged: first and count hold
	batchFailed                    // the log failed it
)

// batch is one remembered batch. It is the append's shardlog.Waiter, so an
// idempotent publish allocates nothing.
type batch struct {
	q     *sequencer
	seq   uint64
	first int64
	count int
	state batchState
	w     Waiter   // the original sender
	extra []Waiter // re-sends that arrived while it was pending
}

func newSequencer(inFlight int) *sequencer {
	q := &sequencer{ring: make([]batch, inFlight)}
	for i := range q.ring {
		q.ring[i].q = q
	}
	return q
}

func (q *sequencer) slot(seq uint64) *batch { return &q.ring[seq%uint64(len(q.ring))] }

// arm readies the slot of sequence q.next for its append; false when that
// slot still holds an unacknowledged batch.
func (q *sequencer) arm(count int, w Waiter) (*batch, bool) {
	b := q.slot(q.next)
	q.ackMu.Lock()
	defer q.ackMu.Unlock()
	if b.state == batchPending {
		return nil, false
	}
	b.seq, b.count, b.first, b.state, b.w = q.next, count, 0, batchPending, w
	clear(b.extra)
	b.extra = b.extra[:0]
	return b, true
}

// disarm undoes arm after the append was refused: nothing landed.
func (q *sequencer) disarm(b *batch) {
	q.ackMu.Lock()
	b.state, b.w = batchEmpty, nil
	q.ackMu.Unlock()
}

// Committed records the log's answer and tells every sender of the batch.
// It runs on the log's committer; the waiters must not block.
func (b *batch) Committed(first, last int64, err error) {
	q := b.q
	q.ackMu.Lock()
	defer q.ackMu.Unlock()
	if err != nil {
		b.state = batchFailed
		if q.failed == nil {
			q.failed = fmt.Errorf("%w: batch %d failed here: %v", ErrProducerUnknown, b.seq, err)
		}
	} else {
		b.state, b.first = batchAcked, first
	}
	a := Ack{Seq: b.seq, First: b.first, Count: b.count}
	if b.w != nil {
		b.w.Acked(a, err)
		b.w = nil
	}
	a.Duplicate = true
	for i, w := range b.extra {
		w.Acked(a, err)
		b.extra[i] = nil
	}
	b.extra = b.extra[:0]
}

// duplicate answers a re-send of seq, which is below next: from memory
// when the batch was acknowledged (told at once, on the caller's
// goroutine), when the original is when it is still pending.
func (q *sequencer) duplicate(seq uint64, w Waiter) error {
	if q.next-seq > uint64(len(q.ring)) {
		return ErrSequenceStale
	}
	b := q.slot(seq)
	q.ackMu.Lock()
	if b.seq != seq || b.state == batchEmpty {
		q.ackMu.Unlock()
		return ErrSequenceStale
	}
	switch b.state {
	case batchPending:
		if w != nil {
			b.extra = append(b.extra, w)
		}
		q.ackMu.Unlock()
		return nil
	case batchFailed:
		err := q.failed
		q.ackMu.Unlock()
		return err
	}
	a := Ack{Seq: seq, First: b.first, Count: b.count, Duplicate: true}
	q.ackMu.Unlock()
	if w != nil {
		w.Acked(a, nil)
	}
	return nil
}

// fail makes the producer unknown on this shard from now on.
func (q *sequencer) fail(err error) {
	q.ackMu.Lock()
	defer q.ackMu.Unlock()
	if q.failed == nil {
		q.failed = err
	}
}

func (q *sequencer) failure() error {
	q.ackMu.Lock()
	defer q.ackMu.Unlock()
	return q.failed
}
