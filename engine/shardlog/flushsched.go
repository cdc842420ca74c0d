package shardlog

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/segment/vfs"
)

// FlushScheduler group-commits the OnCommit flushes of every log that
// shares it (Options.FlushScheduler): one goroutine that, each round, takes
// the fill buffer of every log with records waiting, writes each, and then
// syncs them all together (vfs.SyncBatch: one Submit of an fdatasync per
// log, one io_uring_enter on the io_uring path), and tells each log's
// waiters as its committer would. Logs that become due while a round is
// in flight wait for the next round, so the round in flight is what
// gathers them, as one log's committer gathers its appends.
//
// A log's own committer still does every flush the scheduler does not
// take: one whose records start a new segment (a rollover, with its seals
// and directory syncs, stays off the shared round), and everything left
// once the log is closing. A flush is whoever holds the log's spare
// buffer, as with FlushHere, so a log's flushes stay one at a time and in
// order whichever goroutine runs them, and each waiter is acknowledged
// only after the fdatasync of its own log's file.
//
// What a shared round costs a log: one whose records arrive while another
// log's round is in flight waits for that round to end (at most one sync)
// before its own starts, where its committer would have started at once;
// the gathering's wait (below); and an fdatasync through an io_uring
// worker, which costs more CPU than one on the committer's own thread.
// What it saves: with callers that each wait for their answer, half the
// fdatasyncs (every round serves every caller, where each committer
// alternates between two halves of its callers), and one wake-up per
// round instead of one per log. Measured (docs/benchmarks.md, "Group
// commit across shards"): four logs take 0.51-0.71x the CPU per append at
// 1.11-1.52x the appends/s; one log alone is slower at small values.
//
// Under None and Periodic the option is ignored.
type FlushScheduler struct {
	mu      sync.Mutex
	work    sync.Cond
	due     []*Log // logs with records for the next round, each once (Log.due)
	closing bool
	done    chan struct{}

	// Gathering (see loop): pending counts the Appends waiting in the
	// fill buffers of the logs on the scheduler; while gathering, an
	// Append that brings it to target wakes the scheduler, and so does
	// the timer once the gathering's time is up (timedOut, under mu).
	pending   atomic.Int64
	target    atomic.Int64
	gathering atomic.Bool
	timedOut  bool
	timer     *time.Timer
	lastSync  time.Duration // the last round's sync, the scheduler's own
	// gatherFor is the next round's target: the Appends the last round
	// acknowledged plus those queued while it synced.
	gatherFor int64

	// The round's scratch, the scheduler goroutine's own.
	round []roundLog
	syncs vfs.SyncBatch
}

// roundLog is one log's part of a round.
type roundLog struct {
	l     *Log
	b     *buffer
	sync  int // index in the SyncBatch; -1 when the write failed
	err   error
	began time.Time
}

// NewFlushScheduler starts a scheduler. Close it after every log that
// shares it is closed.
func NewFlushScheduler() *FlushScheduler {
	s := &FlushScheduler{done: make(chan struct{})}
	s.work.L = &s.mu
	s.timer = time.AfterFunc(time.Hour, s.timeUp)
	s.timer.Stop()
	go s.loop()
	return s
}

// Close stops the scheduler. Logs still open on it must be closed first
// (a log closing flushes what it has on its own committer).
func (s *FlushScheduler) Close() {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		<-s.done
		return
	}
	s.closing = true
	s.work.Signal()
	s.mu.Unlock()
	<-s.done
}

// schedule makes l due for the next round, unless it already is. With the
// scheduler closed, l's own committer is woken instead. Called with l.mu
// held (the lock order is l.mu, then s.mu).
func (s *FlushScheduler) schedule(l *Log) {
	if l.due {
		return
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		l.committerTurn = true
		l.work.Signal()
		return
	}
	l.due = true
	s.due = append(s.due, l)
	s.work.Signal()
	s.mu.Unlock()
}

// queued counts n Appends placed in a log's fill buffer; unqueue counts
// them out when the buffer is taken. Called with the log's mu held.
func (s *FlushScheduler) queued(n int) {
	if s.pending.Add(int64(n)) >= s.target.Load() && s.gathering.Load() {
		s.mu.Lock()
		s.work.Signal()
		s.mu.Unlock()
	}
}

func (l *Log) unqueue(b *buffer) {
	if l.sched != nil && b.appends > 0 {
		l.sched.pending.Add(-int64(b.appends))
	}
}

func (s *FlushScheduler) timeUp() {
	s.mu.Lock()
	s.timedOut = true
	s.work.Signal()
	s.mu.Unlock()
}

// Gathering: when a round acknowledges k Appends, their callers (clients
// each waiting for its answer) append again moments later, while the q
// Appends queued during the round's sync wait. Starting the next round at
// once would take only the q, and the logs would sync twice as often as
// they need: rounds alternate between two halves of the callers. So the
// next round waits until k+q Appends are queued, or until gatherFrac of
// the last round's sync has passed (at most gatherMax), whichever comes
// first: a lone synchronous caller (k = 1, q = 0) never waits, and callers
// that do not come back cost at most that fraction of a sync. Every sync
// then serves about every caller.
const (
	gatherFrac = 2 // wait at most 1/gatherFrac of the last sync
	gatherMax  = time.Millisecond
)

func (s *FlushScheduler) loop() {
	defer close(s.done)
	var due []*Log
	for {
		s.mu.Lock()
		for len(s.due) == 0 && !s.closing {
			s.work.Wait()
		}
		if len(s.due) == 0 {
			s.mu.Unlock()
			return
		}
		s.gatherLocked()
		due, s.due = s.due, due[:0]
		s.mu.Unlock()
		s.runRound(due)
		clear(due)
	}
}

// gatherLocked waits, with mu held, until as many Appends are queued as
// the last round acknowledged, or the gathering's time is up.
func (s *FlushScheduler) gatherLocked() {
	target := s.gatherFor
	if target < 2 || s.pending.Load() >= target || s.closing {
		return
	}
	wait := min(s.lastSync/gatherFrac, gatherMax)
	if wait <= 0 {
		return
	}
	s.target.Store(target)
	s.timedOut = false
	s.gathering.Store(true)
	s.timer.Reset(wait)
	for s.pending.Load() < target && !s.timedOut && !s.closing {
		s.work.Wait()
	}
	s.gathering.Store(false)
	s.timer.Stop()
}

// runRound takes the buffer of each due log it can, writes them, syncs
// them together and tells their waiters.
func (s *FlushScheduler) runRound(due []*Log) {
	s.round = s.round[:0]
	for _, l := range due {
		if b := l.takeForRound(); b != nil {
			s.round = append(s.round, roundLog{l: l, b: b})
		}
	}
	s.syncs.Reset()
	for i := range s.round {
		r := &s.round[i]
		r.began = r.l.opts.Now()
		c := &r.b.chunks[0]
		if _, err := c.seg.file.WriteAt(r.b.data, c.pos); err != nil {
			r.sync, r.err = -1, &failure{op: "write", err: err}
			continue
		}
		r.sync = s.syncs.Add(c.seg.file)
	}
	began := time.Now()
	s.syncs.Run()
	s.lastSync = time.Since(began)
	s.gatherFor = s.pending.Load() // queued during the sync, before any answer
	for i := range s.round {
		r := &s.round[i]
		s.gatherFor += int64(r.b.appends)
		if r.sync >= 0 {
			r.l.counters.syncs.Add(1)
			if err := s.syncs.Err(r.sync); err != nil {
				r.err = &failure{op: "write", err: err}
			}
		}
		r.l.finishRound(r.b, r.err, r.began)
		*r = roundLog{}
	}
	s.syncs.Reset()
}

// takeForRound takes l's fill buffer for the scheduler's round, as
// FlushHere does: only while no other flush holds the spare, for a buffer
// whose records all go to the active segment (no rollover). Otherwise it
// hands the flush to l's committer and returns nil.
func (l *Log) takeForRound() *buffer {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.due = false
	switch {
	case l.fill.empty():
		return nil
	case l.spare == nil:
		// A flush is in progress (the committer's): it schedules the
		// log again when it returns the buffer with records waiting.
		return nil
	case l.closing || l.poison != nil || len(l.fill.chunks) != 1 || !l.fill.open():
		l.committerTurn = true
		l.work.Signal()
		return nil
	}
	b := l.fill
	l.unqueue(b)
	l.fill, l.spare = l.spare, nil
	l.fill.reset(l.next)
	l.space.Broadcast()
	return b
}

// finishRound ends l's part of a round: the flush of b, written and
// synced (err nil) or failed, told as the committer tells a flush; then
// the buffer goes back.
func (l *Log) finishRound(b *buffer, err error, began time.Time) {
	if err != nil {
		l.failFlush(b, progress{done: 0, touched: 1}, err)
	} else {
		l.observeFlush(b, true, l.opts.Now().Sub(began))
		l.publish(b, true)
	}
	l.returnBuffer(b)
}
