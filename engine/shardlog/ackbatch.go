package shardlog

// AckBatch is the acknowledgement of one flush, as a BatchWaiter sees it:
// the committer tells every waiter of the flush, then runs, once each, the
// Flushers they deferred. A waiter that answers over a connection encodes
// its answer and defers the connection's write: the answers of one flush
// to one connection then leave in one write, after the last of them, and
// not one write (or one hand-off to another goroutine) each.
//
// An AckBatch belongs to the committer that tells the flush; it is reused
// from flush to flush, so deferring allocates nothing in steady state.
type AckBatch struct {
	flushers []Flusher
}

// Flusher is work deferred to the end of a flush's acknowledgements.
type Flusher interface {
	// FlushAcks runs on the committer once the flush's waiters have all
	// been told. Like Committed, it must not block nor call Append.
	FlushAcks(FlushInfo)
}

// FlushInfo is what a Flusher is told of the flush it was deferred to.
type FlushInfo struct {
	// Flushers is how many Flushers the flush deferred (1: this one alone).
	Flushers int
	// Synced: the flush ended with its fdatasync (OnCommit), so it took a
	// disk's time, during which whoever queued the records went on (or to
	// sleep). Without it the flush was a page-cache write, done moments
	// after the records were queued.
	Synced bool
	// Replicated: told by a replicated shard's leader on a follower's
	// answer, not by a log's committer: no flush of a log waits behind
	// the Flushers, and whoever queued the records went on a round trip
	// ago.
	Replicated bool
}

// BatchWaiter is a Waiter told with the batch of the flush that
// acknowledged it. Committed is still what the log calls where there is
// no batch (a failure, which may be told from other goroutines).
type BatchWaiter interface {
	Waiter
	CommittedIn(b *AckBatch, first, last int64)
}

// Defer runs f once the flush's waiters have all been told. A Flusher
// deferred twice in one batch runs twice: the caller keeps its own mark.
// Committer only (inside CommittedIn).
func (b *AckBatch) Defer(f Flusher) { b.flushers = append(b.flushers, f) }

// tell acknowledges ready, in order, then runs what they deferred.
func (b *AckBatch) tell(ready []pending, synced bool) {
	for i := range ready {
		p := &ready[i]
		b.Tell(p.w, p.first, p.last)
		*p = pending{}
	}
	b.Flush(FlushInfo{Synced: synced})
}

// Tell acknowledges w's records first to last in the batch: CommittedIn
// for a BatchWaiter, Committed for another. For whoever owns an AckBatch
// outside a log (a replicated shard's leader tells the appends a
// follower's answer committed), with Flush once they are all told; one
// goroutine at a time.
func (b *AckBatch) Tell(w Waiter, first, last int64) {
	if bw, ok := w.(BatchWaiter); ok {
		bw.CommittedIn(b, first, last)
		return
	}
	w.Committed(first, last, nil)
}

// Flush runs, once each, what the waiters told since the last Flush
// deferred, telling each info (its Flushers set to their number), and
// empties the batch.
func (b *AckBatch) Flush(info FlushInfo) {
	if len(b.flushers) == 0 {
		return
	}
	info.Flushers = len(b.flushers)
	for i, f := range b.flushers {
		f.FlushAcks(info)
		b.flushers[i] = nil
	}
	b.flushers = b.flushers[:0]
}
