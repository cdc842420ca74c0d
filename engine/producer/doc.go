// Package producer is idempotent publishing: a producer takes an ID from
// the broker and numbers its batches per shard, so a batch whose
// acknowledgement was lost can be sent again and land once. It closes the
// ambiguous outcome on the publish side only: a consumer can still see a
// record twice, and there are no transactions.
//
// It must never append a batch the shard already holds for the producer,
// never answer a sequence it does not remember as if it did (a re-send it
// cannot vouch for is an error, never an acknowledgement), never answer
// for a shard this broker does not lead, and never append a batch whose
// outcome it could not then report.
//
// # Rules
//
//   - Register issues ID{Producer, Epoch}. Epoch is this broker's
//     incarnation (random unless given), so after a restart, or at another
//     broker (a new leader), every earlier ID is unknown:
//     ErrProducerUnknown. A batch in flight at that moment is reported as
//     of unknown outcome, rather than silently landed or dropped.
//   - Sequences count batches per producer and shard, from 0. The expected
//     one is appended; one of the last InFlightMax below it is answered
//     from memory with the original acknowledgement (the offsets the batch
//     got, Duplicate set), or, when the original is still unacknowledged,
//     with that acknowledgement once it comes; an older one is
//     ErrSequenceStale; a later one is a *SequenceError naming the
//     expected sequence (matching ErrSequenceGap). A producer may have at
//     most InFlightMax unacknowledged batches per shard
//     (ErrTooManyInFlight), so every batch it may still re-send is
//     remembered.
//   - The sequence check and the append are atomic per producer and shard:
//     two re-sends of one batch arriving at once append it once.
//   - State lives in memory only, and is bounded: a producer idle for
//     IdleTimeout is forgotten (unknown from then on), at most
//     ProducersMax are live, and each remembers InFlightMax outcomes per
//     shard it writes (about 580 bytes for a producer on one shard with
//     the default 5; BenchmarkProducerMemory measures it).
//   - A batch the log fails makes the producer unknown on that shard (its
//     bytes may or may not be on disk). ForgetShard does the same for
//     every producer of a shard: it runs by itself when a shard stops here
//     (released to another broker, deleted, closed: forget.go attaches to
//     each shard a batch reached), and the cluster layer calls it when
//     this broker stops leading a shard it still holds.
//
// # Data
//
//	Manager.producers: map id -> producer
//	producer.shards:   [(stream, shard) -> sequencer]  (few; searched in order)
//	sequencer:         next sequence, ring of InFlightMax batches
//	                   batch = {seq, first offset, count, state, waiters}
//
// A batch slot is the shardlog.Waiter of its own append, so an idempotent
// publish allocates nothing in steady state.
//
// # Locks
//
// Lock order: Manager.mu, producer.mu, sequencer.seqMu, sequencer.ackMu.
// seqMu is held from the sequence check through the append (which may wait
// for buffer room). The log's committer, which records acknowledgements,
// takes only ackMu, a leaf, so an appender waiting for room under seqMu
// never blocks the committer that frees it. Waiters run under ackMu (on the
// committer) or with no lock held (a re-send of an acknowledged batch), and
// must not block nor call the Manager.
package producer
