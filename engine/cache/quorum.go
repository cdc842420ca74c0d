package cache

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment"
)

// A replicated cache created at Quorum (Config.Consistency) has both logs
// of each shard held as Quorum parts (engine/replication_part.go), and its
// writes and reads go as a Quorum stream's publishes and subscriptions do:
//
//   - A put, delete (conditional or not) or counter add is acknowledged
//     once its own log has it at its FsyncMode and then the part vouches
//     for it (Part.Vouch): the part's quorum watermark passed it and the
//     lease of the generation it was appended at still holds. With no
//     majority in the publish timeout it is refused with the part's
//     no_quorum error: the write may be stored (it stays in the leader's
//     log and index, and a later read waits for it as below).
//   - What readers see ends at the values part's commit watermark
//     (shard.committed, handed over by the leadership's OnCommit,
//     onCommitted): a get whose key's newest write is beyond it (a
//     delete's too, which took the key out of the index: shard.deleting)
//     waits for it to commit, at most QuorumTimeout, then answers
//     ErrNoQuorum; a watch is handed records only as they commit, and
//     starts, resumes and catches up below the watermark. So no get or
//     watch at the leader shows a value a failover could take back.
//   - A counter get waits for the add its sum last folded in to be
//     vouched for.
//   - Those waits are parked, never made on the caller's goroutine, by
//     the async calls (GetAsync, CounterGetAsync, a refused condition or
//     a delete of nothing through PutAsync and DeleteAsync: park.go); the
//     blocking calls (Get, CounterGet, Put, Delete) wait on theirs.
//
// A leadership at Quorum appends a generation-start record to each log
// before the shard sees it lead; the shard's rebuild, its counters' fold,
// its watches and its compaction skip it as a control record, and it
// commits what the old leader left beyond the watermark (Raft's figure 8)
// before any of it is shown.

// ErrNoQuorum refuses a read of a Quorum cache whose key's newest write no
// majority acknowledged within Options.QuorumTimeout: this broker cannot
// vouch for the value (the write may yet commit, or be lost at a
// failover).
var ErrNoQuorum = fmt.Errorf("%w: felix/cache: no majority of the replicas acknowledged the key's newest write in time; this broker cannot vouch for its value", wire.CodeNoQuorum)

// quorumRecheck is how often a read waiting for a commit looks again at
// its shard's leadership and its deadline.
const quorumRecheck = 50 * time.Millisecond

// onCommitted is the values part's OnCommit: the leadership at gen
// committed the records up to next. It runs on the replica's goroutine,
// in order. Records of a leadership the shard was not built at are its
// own business: takeLead takes the part's watermark when it builds. The
// reads parked on what it committed go on (park.go).
func (sh *shard) onCommitted(gen uint32, _, next int64, records []byte) {
	sh.watchMu.Lock()
	if gen == sh.led.Load() && sh.leadsAt(gen) {
		if next > sh.committed.Load() {
			sh.committed.Store(next)
		}
		sh.fanOutLocked(records)
	}
	sh.watchMu.Unlock()
	sh.committedParked(sh.committed.Load())
}

// wakeReaders wakes the reads waiting for a record to become visible.
func (sh *shard) wakeReaders() {
	sh.visMu.Lock()
	sh.visCond.Broadcast()
	sh.visMu.Unlock()
}

// takeCommitted starts a leadership's reads at its part's watermark, gen
// the generation it was built at. watchMu held.
func (sh *shard) takeCommitted(gen uint32) {
	if !sh.quorum {
		return
	}
	c, _ := sh.primary().Commit(gen)
	sh.committed.Store(c)
}

// waitCommitted waits until the record at off is committed at Quorum, the
// shard stops, its leadership ends, or QuorumTimeout passes: parked
// (park.go), on the caller's goroutine. For the blocking calls only (Get,
// a watch's snapshot on its own goroutine); a loop's read parks with
// GetAsync.
func (sh *shard) waitCommitted(off int64) error {
	s := syncReads.Get().(*syncRead)
	defer syncReads.Put(s)
	s.rw.Begin(s)
	parked, err := sh.park(&s.rw, off, sh.led.Load())
	if err != nil || !parked {
		return err // visible as it was parked (or stopped): the caller looks again
	}
	return <-s.ch
}

// readVisible reads the values log from `from` as Read does, but never a
// record at or past visible (a Quorum shard's watermark).
func (sh *shard) readVisible(from int64, maxBytes int, dst []byte) ([]byte, int64, error) {
	if !sh.quorum {
		return sh.logs.Read(from, maxBytes, dst)
	}
	limit := sh.visible()
	if from >= limit {
		return dst, from, nil
	}
	out, next, err := sh.logs.Read(from, maxBytes, dst)
	if err != nil || next <= limit {
		return out, next, err
	}
	it := segment.NewIter(out[len(dst):])
	for {
		at := it.Pos()
		r, ok := it.Next()
		if !ok || r.Offset >= limit {
			return out[:len(dst)+at], limit, nil
		}
	}
}

// parkRefusal parks the answer of a write refused on its condition on a
// Quorum shard: its *PreconditionError names the key's state as the index
// holds it, which may include writes not committed yet, so w is told it
// only once everything its writer had appended (up to seen) is committed
// (parkAnswer). It returns what the write's call returns: nil once w will
// be told, err itself when nothing is left to wait for, or why it cannot
// wait. Any other err passes through: a write that appended is answered
// by its waiter.
func (sh *shard) parkRefusal(err error, seen int64, w WriteWaiter) error {
	if err == nil || !sh.quorum || !errors.Is(err, ErrPreconditionFailed) {
		return err
	}
	parked, werr := sh.parkAnswer(seen, w, Written{}, err)
	switch {
	case werr != nil:
		return werr
	case parked:
		return nil
	}
	return err
}

// awaitVouched waits until the leadership of p at gen vouches for its
// records up to last (a Quorum counters part: the add a get's sum last
// folded in), unless its watermark passed it already.
func awaitVouched(p *heldPart, gen uint32, last int64) error {
	if c, ok := p.Commit(gen); ok && c > last {
		return nil
	}
	w := vouchWaits.Get().(vouchWait)
	defer vouchWaits.Put(w)
	p.Vouch(gen, last, last, w)
	return <-w
}

// vouchWait is a Waiter that sends the outcome on itself (buffered 1);
// pooled, each drained before it goes back.
type vouchWait chan error

func (w vouchWait) Committed(_, _ int64, err error) { w <- err }

var vouchWaits = sync.Pool{New: func() any { return make(vouchWait, 1) }}

// vouchRead answers v, the sum of a counter get whose last add is at
// v.Offset, once the counters part's leadership at gen vouches for that
// add: now when its watermark passed it already, and otherwise through r
// (wait true), parked on the part's Vouch; with r nil it parks nothing.
func (cs *counterSlot) vouchRead(p *heldPart, gen uint32, v CounterValue, r CounterReader) (CounterValue, bool, error) {
	if c, ok := p.Commit(gen); ok && c > v.Offset {
		return v, false, nil
	}
	if r == nil {
		return CounterValue{}, true, nil
	}
	if cs.parked.Add(1) > parkedReadsMax {
		cs.parked.Add(-1)
		return CounterValue{}, false, ErrReadsParkedFull
	}
	cr := counterReads.Get().(*counterRead)
	cr.cs, cr.r, cr.v = cs, r, v
	p.Vouch(gen, v.Offset, v.Offset, cr)
	return CounterValue{}, true, nil
}

// counterRead is a parked counter get: the sum it answers once its part
// vouches for the add it holds. Pooled.
type counterRead struct {
	cs *counterSlot
	r  CounterReader
	v  CounterValue
}

var counterReads = sync.Pool{New: func() any { return new(counterRead) }}

func (cr *counterRead) Committed(_, _ int64, err error) {
	cs, r, v := cr.cs, cr.r, cr.v
	*cr = counterRead{}
	counterReads.Put(cr)
	cs.parked.Add(-1)
	if err != nil {
		v = CounterValue{}
	}
	r.CounterRead(v, err)
}

// deletingSweep is how many deletes deleting holds, at least, before
// those below the watermark are dropped.
const deletingSweep = 256

// noteDeletingLocked records, on a Quorum shard, that the record at off
// deletes the key of fp. ixMu held for writing (or the shard not shared
// yet: a rebuild's).
func (sh *shard) noteDeletingLocked(fp fingerprint, off int64) {
	if !sh.quorum {
		return
	}
	if sh.deleting == nil {
		sh.deleting = map[uint64]int64{}
	}
	sh.deleting[fp.h] = off
	if len(sh.deleting) >= max(sh.deletingSweepAt, deletingSweep) {
		sh.sweepDeletingLocked()
	}
}

// sweepDeletingLocked drops the deletes below the watermark, which no
// get waits for any more. ixMu held for writing.
func (sh *shard) sweepDeletingLocked() {
	vis := sh.visible()
	for h, o := range sh.deleting {
		if o < vis {
			delete(sh.deleting, h)
		}
	}
	sh.deletingSweepAt = 2 * len(sh.deleting)
}

// deletePendingLocked is the offset of the delete of fp's key that is not
// visible yet, -1 when none. ixMu held.
func (sh *shard) deletePendingLocked(fp fingerprint) int64 {
	if off, ok := sh.deleting[fp.h]; ok && off >= sh.visible() {
		return off
	}
	return -1
}
