package shardlog

import "github.com/felixbroker/felix/segment"

// AppendAt is a follower's append: entries are the records its leader
// placed at offsets first, first+1, ... under generation gen, after a
// record the leader has at first-1 under generation prevGen. It appends
// them only when they continue this log exactly, so that a follower's log
// stays a prefix of its leader's:
//
//   - first is the log's next offset (End, counting appends queued but not
//     yet acknowledged, so a follower may send the next batch before the
//     last is acknowledged); past it is ErrGap, below it ErrOverlap;
//   - the log's record at first-1 has generation prevGen, else ErrDiverged;
//   - gen is at least the log's last generation (and prevGen), else
//     ErrStaleGeneration.
//
// A refusal appends nothing and is a *DivergenceError (errors.go) whose
// fields say where the log is. On ErrDiverged the follower truncates to
//
//	min(follower.GenerationEnd(PrevGen), leader.GenerationEnd(LastGen))
//
// and asks its leader again from there. The first term alone is enough
// when LastGen > PrevGen (every record of the follower's above PrevGen
// differs from the leader's, whose generations up to first-1 are at most
// PrevGen), but removes nothing when LastGen < PrevGen: there only the
// leader knows where its records of generation LastGen or below end. Each
// such round shortens the follower's log, so the loop ends.
//
// When the log holds no record at first-1 (it is empty: Start == End)
// there is nothing to compare prevGen with. At offset 0 nothing precedes
// the batch, so prevGen must be 0. A log emptied at a later start (by
// Truncate at its Start) accepts any prevGen: it holds no record that
// could contradict the leader's, and nothing below its start is served.
// Only the generation floor (LastGeneration) still applies.
//
// The acknowledgement (w, which may be nil) is exactly Append's at the
// log's FsyncMode. The checks and the placement run under the lock Append
// takes, so they are atomic: of concurrent AppendAt calls at one offset
// exactly one is appended and the others get ErrOverlap. A follower's log
// should take AppendAt only: an Append in between moves the next offset,
// and the leader's next batch is then refused as an overlap (its records
// differ from the Append's), never placed at the wrong offset.
func (l *Log) AppendAt(first int64, prevGen uint32, entries []Entry, gen uint32, w Waiter) error {
	if len(entries) == 0 {
		return ErrEmptyBatch
	}
	size := batchSize(entries)
	l.mu.Lock()
	if err := l.admitAt(first, prevGen, gen, size); err != nil {
		l.mu.Unlock()
		return err
	}
	l.placeBatch(entries, gen, w, size)
	l.kick()
	l.mu.Unlock()
	return nil
}

// admitAt checks that the batch follows the log, then waits for buffer
// room as Append does. It checks first so that a diverged batch is told
// so, not refused as stale by admit (a new leader resends records an
// older leader wrote, under their lower generation), and again after
// admit, which may have released the lock to wait while others appended.
func (l *Log) admitAt(first int64, prevGen, gen uint32, size int) error {
	if err := l.follows(first, prevGen, gen); err != nil {
		return err
	}
	if err := l.admit(size, gen); err != nil {
		if moved := l.follows(first, prevGen, gen); moved != nil {
			return moved // a stale refusal after a wait: the log moved on
		}
		return err
	}
	return l.follows(first, prevGen, gen)
}

// follows is nil when a batch at first after prevGen, written under gen,
// continues the log, else why not. The log's last record, when it holds
// one (its start is below its next offset), has the log's last generation:
// every append sets it, Truncate sets that of the record before its
// offset, and recovery that of the last record it found (restoreLastGen,
// recover.go: also when a crash left the active segment empty). Under mu.
func (l *Log) follows(first int64, prevGen, gen uint32) error {
	last, held := l.lastGen, l.next > l.start.Load()
	var kind error
	switch {
	case first > l.next:
		kind = ErrGap
	case first < l.next:
		kind = ErrOverlap
	case held && prevGen != last, !held && l.next == 0 && prevGen != 0:
		kind = ErrDiverged
	case gen < max(last, prevGen):
		kind = ErrStaleGeneration
	default:
		return nil
	}
	return &DivergenceError{Want: l.next, LastGen: last, Got: first, PrevGen: prevGen, Gen: gen, Kind: kind}
}

// placeBatch frames entries at the next offsets and queues w, as Append
// does once admitted. Under mu.
func (l *Log) placeBatch(entries []Entry, gen uint32, w Waiter, size int) {
	first := l.next
	var now int64
	for i := range entries {
		e := &entries[i]
		ts := e.Timestamp
		if ts == 0 {
			if now == 0 {
				now = l.opts.Now().UnixNano()
			}
			ts = now
		}
		l.place(e, gen, ts)
	}
	if w != nil {
		l.waiters.push(pending{first: first, last: l.next - 1, w: w})
	}
	l.fill.appends++
	if l.sched != nil {
		l.sched.queued(1)
	}
	l.counters.appends.Add(1)
	l.counters.records.Add(int64(len(entries)))
	l.counters.bytes.Add(int64(size))
}

// batchSize is the bytes entries take framed.
func batchSize(entries []Entry) int {
	size := 0
	for i := range entries {
		size += segment.RecordSize(len(entries[i].Key), len(entries[i].Value))
	}
	return size
}
