package replica

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
)

// Adoption: a new leader of a shard's secondary part takes the longest
// tail among the part's replicas before it leads it (docs/replication.md,
// "A shard's parts"). The promotion weighed the shard's primary log only,
// so the replica it chose may lack records of a part that another replica
// holds: written by the old leader at the Leader level, acknowledged, and
// shipped to that replica only. The new leader asks each follower where
// its log of the part ends (GENERATION_END as a replica, leader gen 0),
// and when one holds a later (last generation, end) than its own:
//
//  1. truncates its own log until it is a prefix of that replica's, by the
//     rounds of the KIP-279 synchronisation (follower_truncate.go), asking
//     that replica as a replica;
//  2. reads the rest from it (LOG_READ, answered with a REPLICATE of the
//     replica's records) and appends them at their offsets and
//     generations, until it holds that replica's end.
//
// It runs as a synchronisation does (syncing set): nothing else appends to
// or truncates the log meanwhile, and a fence above its generation ends
// it. Its generation's leadership starts once it ends, whether it took the
// whole tail or not (a replica that stopped answering leaves it as it is).

// adoptBytes bounds one LOG_READ's records.
const adoptBytes = DefaultBatchBytes

// startAdopt starts taking peer's log, which ends at end, as the new
// leader of gen. It returns the channel closed when the adoption has
// ended, or nil when a synchronisation runs already.
func (f *Follower) startAdopt(peer string, gen uint64, end int64) <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.syncing || f.closed {
		return nil
	}
	ctx, stop := context.WithCancel(f.ctx)
	done := make(chan struct{})
	f.syncing, f.syncGen, f.syncStop, f.syncDone = true, gen, stop, done
	f.wg.Add(1)
	go f.adopt(ctx, peer, gen, end, done)
	return done
}

func (f *Follower) adopt(ctx context.Context, peer string, gen uint64, end int64, done chan struct{}) {
	defer f.wg.Done()
	defer close(done)
	err := f.truncateFor(ctx, peer, gen, 0)
	if err == nil {
		err = f.pull(ctx, peer, gen, end)
	}
	next, lastGen := nextOffset(f.log), f.log.LastGeneration()
	f.mu.Lock()
	f.syncStop()
	f.syncing, f.syncStop = false, nil
	f.next, f.lastGen = next, lastGen
	f.mu.Unlock()
	switch {
	case err == nil:
		f.logger.Info("replica part took a longer tail from a follower before leading", "log", f.ref.String(),
			"from", peer, "generation", gen, "end", next)
	case !errors.Is(err, errSuperseded) && f.ctx.Err() == nil:
		f.logger.Warn("replica part could not take a follower's longer tail; it leads with its own", "log", f.ref.String(),
			"from", peer, "generation", gen, "end", next, "err", err)
	}
}

// pull reads peer's records from the log's end until it reaches end.
func (f *Follower) pull(ctx context.Context, peer string, gen uint64, end int64) error {
	var req, buf []byte
	for next := nextOffset(f.log); next < end; next = nextOffset(f.log) {
		if ctx.Err() != nil || f.fences.State().Generation != gen {
			return errSuperseded
		}
		req = wire.AppendLogRead(req[:0], 0, wire.LogRead{Log: f.ref, From: next, MaxBytes: adoptBytes})
		m, answer, err := f.callLogRead(ctx, peer, req, buf)
		buf = answer
		if err != nil {
			return err
		}
		if m.First != next || m.PrevGen != uint64(f.log.LastGeneration()) && next > f.log.Start() {
			return fmt.Errorf("%w: %s answered LOG_READ from %d (after generation %d) with records from %d after generation %d",
				ErrMalformed, peer, next, f.log.LastGeneration(), m.First, m.PrevGen)
		}
		if len(m.Records) == 0 {
			return nil // it holds no more (its log was truncated meanwhile)
		}
		if err := f.appendAdopted(&m); err != nil {
			return err
		}
	}
	return nil
}

// callLogRead sends one LOG_READ and decodes its REPLICATE answer.
func (f *Follower) callLogRead(ctx context.Context, peer string, req, buf []byte) (wire.Replicate, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, f.callTimeout)
	defer cancel()
	answer, err := f.tr.Call(ctx, peer, req, buf)
	if err != nil {
		return wire.Replicate{}, buf, fmt.Errorf("felix/replica: asking %s LOG_READ: %w", peer, err)
	}
	var m wire.Replicate
	switch answer.Type {
	case wire.TypeReplicate:
		if err := m.Decode(answer, wire.Limits{}); err != nil {
			return m, answer.Body, fmt.Errorf("felix/replica: %s answered LOG_READ: %w", peer, err)
		}
		return m, answer.Body, nil
	case wire.TypeError:
		var e wire.Error
		if err := e.Decode(answer, wire.Limits{}); err != nil {
			return m, answer.Body, fmt.Errorf("felix/replica: %s answered LOG_READ with a malformed ERROR: %w", peer, err)
		}
		return m, answer.Body, fmt.Errorf("felix/replica: %s refused LOG_READ: %w", peer, &e)
	}
	return m, answer.Body, fmt.Errorf("felix/replica: %s answered LOG_READ with %v", peer, answer.Type)
}

// appendAdopted appends one answer's records at their offsets and
// generations and waits until the log has them at its FsyncMode.
func (f *Follower) appendAdopted(m *wire.Replicate) error {
	entries, runs, err := appendEntries(f.entries[:0], f.runs[:0], m.Records, m.First)
	f.entries, f.runs = entries, runs
	if err != nil {
		return err // a hole (its log was compacted there): what it holds past it cannot be taken
	}
	first, prevGen := m.First, uint32(min(m.PrevGen, math.MaxUint32))
	w := make(waitErr, 1)
	for i, r := range runs {
		var waiter waitErr
		if i == len(runs)-1 {
			waiter = w
		}
		if err := f.log.AppendAt(first, prevGen, entries[r.start:r.end], r.gen, waiterOrNilErr(waiter)); err != nil {
			return fmt.Errorf("felix/replica: appending an adopted tail of %s at %d: %w", f.ref.String(), first, err)
		}
		first += int64(r.end - r.start)
		prevGen = r.gen
	}
	if len(runs) == 0 {
		return nil
	}
	return <-w
}

// waitErr is a shardlog.Waiter that passes its outcome on.
type waitErr chan error

func (w waitErr) Committed(_, _ int64, err error) { w <- err }

func waiterOrNilErr(w waitErr) shardlog.Waiter {
	if w == nil {
		return nil
	}
	return w
}
