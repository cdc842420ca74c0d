package cache

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// Parked reads. A read of a Quorum shard whose answer must wait for a
// write to commit (a get whose key's newest write is beyond the commit
// watermark, a refused condition or a delete of a key with no value
// while writes before it are uncommitted) never waits on its caller's
// goroutine through the async calls (GetAsync, PutAsync, DeleteAsync):
// it is parked on its shard, and its waiter is told once it may go on:
//
//   - the watermark passed the offset it waits for (onCommitted: the
//     leadership's OnCommit, on the replica's goroutine): nil;
//   - its deadline passed (the shard's recheck timer, every
//     quorumRecheck while any read is parked): ErrNoQuorum;
//   - the leadership it began under ended (the same timer): a
//     *engine.NotLeaderError;
//   - the shard stopped or failed (fail, on the goroutine that stops
//     it): why.
//
// A shard parks at most parkedReadsMax reads; one more is refused with
// ErrReadsParkedFull (overloaded), nothing of it kept. The records are
// the callers' (ReadWait: a connection's job embeds one), linked into the
// shard's list, so nothing is allocated per read. parked.mu is a leaf:
// waiters are told with it let go of.

// parkedReadsMax bounds the reads parked on one shard.
const parkedReadsMax = 1024

// ErrReadsParkedFull refuses a read of a Quorum shard that would wait for
// a commit while parkedReadsMax reads of the shard already do (its
// writes are not reaching a majority): nothing was kept; ask again later.
var ErrReadsParkedFull = fmt.Errorf("%w: felix/cache: too many reads of this cache shard are waiting for its writes to reach a majority of the replicas; try again later", wire.CodeOverloaded)

// ReadWaiter is told once when a parked read may go on: err nil when the
// write it waited for committed (the caller asks the read again, with the
// same ReadWait), otherwise its answer (ErrNoQuorum, a
// *engine.NotLeaderError, the shard's stop). It runs on the replica's
// goroutine, a timer's or the goroutine that stops the shard (which may
// hold the shard's writeMu: a failed append stops it), possibly before
// the call that parked it has returned; it must not block, nor take any
// lock of the shard.
type ReadWaiter interface {
	CacheReadReady(err error)
}

// ReadWait is a caller's record of one read that may be parked. The
// caller owns it (embed one per read in flight), calls Begin before the
// read's first try, and touches it no more between a call that parked it
// and its waiter's CacheReadReady. A read asked again keeps the deadline
// of its first park: however many newer writes it meets, it waits at most
// Options.QuorumTimeout in all.
type ReadWait struct {
	w        ReadWaiter
	deadline time.Time // zero until first parked

	// The shard's, under parked.mu while parked.
	off int64  // the record it waits for
	led uint32 // the leadership it began under
	// seq counts its parks, across reads (Begin keeps it): a park looking
	// back at the shard takes only its own off the list.
	seq  atomic.Uint64
	err  error // its answer, between the list and its waiter
	next *ReadWait
}

// Begin readies rw for a new read whose waiter is w. A pooled record
// keeps its ReadWait (never zero it by assignment): its count of parks
// must only grow.
func (rw *ReadWait) Begin(w ReadWaiter) {
	rw.w, rw.deadline, rw.off, rw.led, rw.err, rw.next = w, time.Time{}, 0, 0, nil, nil
}

// parkedReads is a shard's parked reads, newest first.
type parkedReads struct {
	mu    sync.Mutex
	head  *ReadWait
	n     int
	armed bool        // the recheck timer is set
	timer *time.Timer // nil until the first park
	// lowest is the lowest offset a parked read waits for (MaxInt64:
	// none), so a commit that passes none of them takes no lock.
	lowest atomic.Int64
}

func (p *parkedReads) init() { p.lowest.Store(math.MaxInt64) }

// park parks rw for the record at off, under the leadership led, and
// reports whether it did. Not parked with a nil error, the record became
// visible (or the shard stopped) as it was parked: ask the read again. A
// read past its deadline, or on a shard with parkedReadsMax parked, is
// refused.
func (sh *shard) park(rw *ReadWait, off int64, led uint32) (bool, error) {
	now := time.Now()
	if rw.deadline.IsZero() {
		rw.deadline = now.Add(sh.c.store.opts.QuorumTimeout)
	} else if !now.Before(rw.deadline) {
		return false, ErrNoQuorum
	}
	p := &sh.parked
	p.mu.Lock()
	if p.n >= parkedReadsMax {
		p.mu.Unlock()
		return false, ErrReadsParkedFull
	}
	seq := rw.seq.Add(1)
	rw.off, rw.led, rw.err, rw.next = off, led, nil, p.head
	p.head = rw
	p.n++
	if off < p.lowest.Load() {
		p.lowest.Store(off)
	}
	p.armLocked(sh)
	p.mu.Unlock()
	// A commit or a stop that came before rw was listed told nobody: look
	// again now that whoever comes next will see it. From here rw may be
	// its caller's again (told, and parked anew): only seq says it is ours.
	if sh.visible() > off || sh.failed.Load() {
		if p.unpark(rw, seq) {
			return false, nil
		}
	}
	return true, nil
}

// armLocked sets the recheck timer unless it is set. parked.mu held.
func (p *parkedReads) armLocked(sh *shard) {
	if p.armed {
		return
	}
	p.armed = true
	if p.timer == nil {
		p.timer = time.AfterFunc(quorumRecheck, sh.recheckParked)
		return
	}
	p.timer.Reset(quorumRecheck)
}

// unpark takes rw off the list if it is still there from its park seq,
// reporting false when it is not (a settle took it: its waiter is told).
func (p *parkedReads) unpark(rw *ReadWait, seq uint64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if rw.seq.Load() != seq {
		return false
	}
	for at := &p.head; *at != nil; at = &(*at).next {
		if *at == rw {
			*at = rw.next
			rw.next = nil
			p.n--
			return true
		}
	}
	return false
}

// recheckParked is the recheck timer: deadlines and leadership, then the
// timer again while any read is parked.
func (sh *shard) recheckParked() {
	sh.settleParked()
	p := &sh.parked
	p.mu.Lock()
	p.armed = false
	if p.n > 0 {
		p.armLocked(sh)
	}
	p.mu.Unlock()
}

// committedParked tells the reads the watermark passed, once it reached
// next (onCommitted).
func (sh *shard) committedParked(next int64) {
	if next > sh.parked.lowest.Load() {
		sh.settleParked()
	}
}

// settleParked takes off the list every parked read that may go on and
// tells each, in the order of waitCommitted's checks: the shard's stop,
// the record visible, the leadership over, the deadline passed.
func (sh *shard) settleParked() {
	p := &sh.parked
	if p.lowest.Load() == math.MaxInt64 {
		return // none parked: one parking now looks at the shard itself once listed (park)
	}
	stop := sh.usable()
	visible := sh.visible()
	led := sh.led.Load()
	leads := stop == nil && sh.leadsAt(led) // a stop (fail) asks the replication nothing
	now := time.Now()
	var ready *ReadWait
	lowest := int64(math.MaxInt64)
	p.mu.Lock()
	for at := &p.head; *at != nil; {
		rw := *at
		switch {
		case stop != nil:
			rw.err = stop
		case visible > rw.off:
			rw.err = nil
		case rw.led != led || !leads:
			rw.err = sh.c.notLeader(sh.index)
		case !now.Before(rw.deadline):
			rw.err = ErrNoQuorum
		default:
			lowest = min(lowest, rw.off)
			at = &rw.next
			continue
		}
		*at = rw.next
		rw.next, ready = ready, rw
		p.n--
	}
	p.lowest.Store(lowest)
	p.mu.Unlock()
	for ready != nil {
		rw := ready
		ready = rw.next
		rw.next = nil
		rw.w.CacheReadReady(rw.err) // rw may be the caller's again from here
	}
}

// syncRead waits for a parked read on the caller's goroutine (the
// blocking calls: Get, a watch's snapshot). Pooled.
type syncRead struct {
	rw ReadWait
	ch chan error
}

var syncReads = sync.Pool{New: func() any { return &syncRead{ch: make(chan error, 1)} }}

func (s *syncRead) CacheReadReady(err error) { s.ch <- err }

// parkedAnswer holds a write's answer that says what the index holds (a
// refused condition, a delete of a key with no value) until every write
// before it is committed, then tells its waiter: the answer, or why it
// cannot be given. Pooled.
type parkedAnswer struct {
	rw  ReadWait
	w   WriteWaiter
	res Written
	err error
}

var parkedAnswers = sync.Pool{New: func() any { return new(parkedAnswer) }}

func (a *parkedAnswer) CacheReadReady(err error) {
	w, res, answer := a.w, a.res, a.err
	a.release()
	if err != nil {
		w.CacheWritten(Written{}, err)
		return
	}
	w.CacheWritten(res, answer)
}

// parkAnswer parks an answer that says what the index holds (w is to be
// told res and answer) until every record up to seen is committed, on a
// Quorum shard, and reports whether it did: not parked with a nil error,
// nothing is left to wait for (the caller answers now), and an error says
// why it cannot wait (w is told nothing).
func (sh *shard) parkAnswer(seen int64, w WriteWaiter, res Written, answer error) (bool, error) {
	if !sh.quorum || sh.primary() == nil || seen < 0 {
		return false, nil
	}
	if err := sh.usable(); err != nil || sh.visible() > seen {
		return false, err // the common case: nothing to wait for, nothing taken from the pool
	}
	a := parkedAnswers.Get().(*parkedAnswer)
	a.w, a.res, a.err = w, res, answer
	a.rw.Begin(a)
	led := sh.led.Load()
	for {
		if err := sh.usable(); err != nil {
			return false, a.drop(err)
		}
		if sh.visible() > seen {
			return false, a.drop(nil)
		}
		parked, err := sh.park(&a.rw, seen, led)
		if err != nil || parked {
			if err != nil {
				a.drop(nil)
			}
			return parked, err
		}
	}
}

// drop pools an answer that was never parked and returns err.
func (a *parkedAnswer) drop(err error) error {
	a.release()
	return err
}

// release pools a, its ReadWait's seq kept (see ReadWait.Begin).
func (a *parkedAnswer) release() {
	a.w, a.res, a.err = nil, Written{}, nil
	parkedAnswers.Put(a)
}
