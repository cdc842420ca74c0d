package cache

import (
	"fmt"
	"sync"
	"time"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment"
)

// CondKind says when a write applies.
type CondKind uint8

// The conditions, as the wire carries them.
const (
	CondAlways   CondKind = iota // apply unconditionally
	CondIfAbsent                 // put only if the key holds no live value
	CondIfOffset                 // only if the key's live value was written at Condition.Offset
)

// Condition is a write's precondition. A failed one is a
// *PreconditionError carrying the key's current offset.
type Condition struct {
	Kind   CondKind
	Offset int64 // for CondIfOffset
}

// PutOptions are a put's condition and expiry. At most one of TTL (from
// now, on the store's clock) and ExpiresAt (unix ns) may be set; the value
// lives while now < its expiry.
type PutOptions struct {
	Cond      Condition
	TTL       time.Duration
	ExpiresAt int64
}

// Written answers a put or delete: whether the key held a live value
// before, the offset of the record appended (-1 for a delete of a key that
// held none, which appends nothing), and the expiry now in force.
type Written struct {
	Existed   bool
	Offset    int64
	ExpiresAt int64
}

// WriteWaiter is told once when a write is acknowledged at its cache's
// FsyncMode, or failed (then nothing of it may be assumed durable). It runs
// on a log goroutine, or on the caller's when the write appended nothing,
// and must not block. A Quorum cache's refused condition or delete of
// nothing that waited for earlier writes (park.go) is told where a parked
// read is: on the replica's goroutine, the shard's recheck timer, or the
// goroutine that stops the shard.
type WriteWaiter interface {
	CacheWritten(w Written, err error)
}

// state is what the index says of a key, as the writer sees it.
type state struct {
	entry     bool  // the index has an entry for the key
	found     bool  // ... and it names a live value (not expired)
	offset    int64 // the live value's offset; -1 when none
	expiresAt int64
	slot      slot // the table the entry is in, or a new entry goes to
}

func (c Condition) holds(st state) error {
	switch c.Kind {
	case CondAlways:
		return nil
	case CondIfAbsent:
		if !st.found {
			return nil
		}
	case CondIfOffset:
		if st.found && st.offset == c.Offset {
			return nil
		}
	default:
		return fmt.Errorf("%w: kind %d", ErrInvalidCondition, c.Kind)
	}
	return &PreconditionError{Exists: st.found, Current: st.offset}
}

// current reads the key's state. The index says whether an entry names
// the key's value (see index.lookup) and whether that value has an
// expiry; only then is the record needed, for the expiry: pre, when the
// writer read it before taking the lock and the entry has not changed
// since (an offset names the same record for ever); else the pending ring,
// when the write is not visible yet; else the log. A value with no expiry
// is live and its record present (compaction keeps every record the index
// names that has not expired), so a put over it reads nothing. Called
// under writeMu.
func (sh *shard) current(fp fingerprint, key []byte, now int64, pre preRead) (state, error) {
	f := sh.ix.lookup(fp, key)
	switch {
	case !f.ok:
		return state{offset: -1, slot: f.slot}, nil
	case !f.expires:
		return state{entry: true, found: true, offset: f.off, slot: f.slot}, nil
	}
	rec := pre.head
	if !pre.valid || pre.off != f.off || pre.exact != f.exact || pre.no != sh.valueNo.Load() {
		var err error
		if rec, err = sh.head(f.off, key, f.exact); err != nil {
			return state{}, err
		}
	}
	switch {
	case !rec.present: // expired and removed by compaction; the entry is dead
		return state{entry: true, offset: -1, slot: f.slot}, nil
	case !rec.same: // another key holds the whole fingerprint (see index)
		return state{offset: -1, slot: slotCollide}, nil
	case expired(rec.expiresAt, now):
		return state{entry: true, offset: -1, slot: f.slot}, nil
	}
	return state{entry: true, found: true, offset: f.off, expiresAt: rec.expiresAt, slot: f.slot}, nil
}

// recordHead is what a writer needs of the record an index entry names:
// whether it is still there, whether it holds the key, and its expiry.
type recordHead struct {
	present   bool
	same      bool
	expiresAt int64
}

func headOf(r *segment.Record, key []byte, exact bool) (recordHead, error) {
	_, exp, err := valueOf(r)
	return recordHead{present: true, same: exact || keyIs(r.Key, key), expiresAt: exp}, err
}

// head reads the record at off for the writer: from the pending ring, the
// value cache or the log. Called under writeMu.
func (sh *shard) head(off int64, key []byte, exact bool) (recordHead, error) {
	sh.pending.trim(sh.log().End())
	if pw, ok := sh.pending.get(off); ok {
		return recordHead{present: true, same: exact || keyIs(pw.key, key), expiresAt: pw.expiresAt}, nil
	}
	if c, _ := sh.values.lookup(sh.valueNo.Load(), off, key, nil, false); c.ok {
		return recordHead{present: true, same: c.sameKey, expiresAt: c.expiresAt}, nil
	}
	r, out, present, err := sh.readRecord(off, sh.headBuf[:0])
	sh.headBuf = out
	if err != nil || !present {
		return recordHead{}, err
	}
	return headOf(&r, key, exact)
}

// preRead is the record a writer's key's index entry named, read before
// the writer lock when the writer will need it (its value has an expiry),
// so the writers of a shard read in parallel and hold the lock only to
// decide and append. no is the shard's value cache number when it was
// read: a rebuild since (heal.go, replicate.go) renumbers the shard, and
// the offset may then hold another record.
type preRead struct {
	valid bool
	off   int64
	exact bool
	no    uint64
	head  recordHead
}

func (sh *shard) preRead(fp fingerprint, key []byte) preRead {
	if !sh.expiries.Load() || sh.usable() != nil {
		return preRead{} // no value of the shard has an expiry: nothing to read
	}
	no := sh.valueNo.Load() // before the lookup: a rebuild renumbers after it puts its index in
	sh.ixMu.RLock()
	f := sh.ix.lookup(fp, key)
	sh.ixMu.RUnlock()
	if !f.ok || !f.expires || f.off >= sh.log().End() {
		return preRead{}
	}
	if c, _ := sh.values.lookup(no, f.off, key, nil, false); c.ok {
		return preRead{valid: true, off: f.off, exact: f.exact, no: no,
			head: recordHead{present: true, same: c.sameKey, expiresAt: c.expiresAt}}
	}
	buf := readBufs.Get().(*readBuf)
	defer putReadBuf(buf)
	r, out, present, err := sh.readRecord(f.off, buf.b[:0])
	buf.b = out[:0]
	if err != nil {
		return preRead{}
	}
	p := preRead{valid: true, off: f.off, exact: f.exact, no: no}
	if present {
		if p.head, err = headOf(&r, key, f.exact); err != nil {
			return preRead{}
		}
	}
	return p
}

// put applies a put under its condition. The index names the new offset
// before the append, so the write is readable (after its commit) the
// moment it can be acknowledged.
func (sh *shard) put(fp fingerprint, key, value []byte, expiresAt int64, cond Condition, w WriteWaiter, wake bool) error {
	pre := sh.preRead(fp, key)
	sh.writeMu.Lock()
	err := sh.putLocked(fp, key, value, expiresAt, cond, pre, w, wake)
	seen := sh.appended - 1
	sh.writeMu.Unlock()
	return sh.parkRefusal(err, seen, w)
}

// putLocked is put under writeMu.
func (sh *shard) putLocked(fp fingerprint, key, value []byte, expiresAt int64, cond Condition, pre preRead, w WriteWaiter, wake bool) error {
	if err := sh.writable(); err != nil {
		return err
	}
	if err := sh.leadLocked(); err != nil {
		return err
	}
	st, err := sh.current(fp, key, sh.c.nowNanos(), pre)
	if err != nil {
		return err
	}
	if err := cond.holds(st); err != nil {
		return err
	}
	var val []byte
	var flags uint16
	sh.frame, val, flags = frameValue(sh.frame, value, expiresAt)
	off := sh.appended
	if expiresAt != 0 && !sh.expiries.Load() {
		sh.expiries.Store(true)
	}
	sh.ixMu.Lock()
	sh.ix.set(fp, key, st.slot, off, expiresAt != 0)
	sh.ixMu.Unlock()
	if err := sh.append(key, val, flags, expiresAt, Written{Existed: st.found, Offset: off, ExpiresAt: expiresAt}, w, wake); err != nil {
		return err
	}
	if no := sh.valueNo.Load(); st.found && sh.values.holds(no, st.offset) {
		sh.values.insert(no, off, key, expiresAt, value) // the key is read: keep it cached
	}
	return nil
}

// del applies a delete under its condition. A key with no live value
// appends nothing (an expired entry is simply dropped from the index).
func (sh *shard) del(fp fingerprint, key []byte, cond Condition, w WriteWaiter, wake bool) error {
	if cond.Kind == CondIfAbsent {
		return fmt.Errorf("%w: a delete cannot be conditional on absence", ErrInvalidCondition)
	}
	pre := sh.preRead(fp, key)
	sh.writeMu.Lock()
	noop, err := sh.delLocked(fp, key, cond, pre, w, wake)
	seen := sh.appended - 1
	sh.writeMu.Unlock()
	if noop {
		none := Written{Offset: -1}
		if parked, err := sh.parkAnswer(seen, w, none, nil); err != nil || parked {
			return err // told once what came before is committed (park.go)
		}
		w.CacheWritten(none, nil)
		return nil
	}
	return sh.parkRefusal(err, seen, w)
}

// delLocked is del under writeMu; noop: the key had no live value, and
// nothing was appended or told to w.
func (sh *shard) delLocked(fp fingerprint, key []byte, cond Condition, pre preRead, w WriteWaiter, wake bool) (noop bool, _ error) {
	if err := sh.writable(); err != nil {
		return false, err
	}
	if err := sh.leadLocked(); err != nil {
		return false, err
	}
	st, err := sh.current(fp, key, sh.c.nowNanos(), pre)
	if err != nil {
		return false, err
	}
	if err := cond.holds(st); err != nil {
		return false, err
	}
	if st.entry {
		sh.ixMu.Lock()
		sh.ix.remove(fp, key, st.slot)
		if st.found {
			sh.noteDeletingLocked(fp, sh.appended) // the tombstone's offset
		}
		sh.ixMu.Unlock()
	}
	if !st.found {
		return true, nil
	}
	return false, sh.append(key, nil, segment.FlagTombstone, 0, Written{Existed: true, Offset: sh.appended}, w, wake)
}

// append appends one record at the offset the writer predicted, waking
// the committer unless wake is false (then the caller must flushOrWake
// once it has let go of writeMu). A refused append (a failed or closing
// log) stops the shard: the index already names the offset, and only a
// reopen rebuilds it from disk. A replicated shard appends with AppendAt
// at that offset, after the generation of its last record, so a log its
// replica moved meanwhile refuses the record (replicate.go: leadLost).
func (sh *shard) append(key, val []byte, flags uint16, expiresAt int64, res Written, w WriteWaiter, wake bool) error {
	op := writeOps.Get().(*writeOp)
	l := sh.log()
	op.sh, op.l, op.w, op.res, op.gen = sh, l, w, res, sh.writeGen
	op.entry[0] = shardlog.Entry{Key: key, Value: val, Flags: flags}
	var off int64
	var err error
	switch {
	case sh.primary() != nil:
		off, err = res.Offset, l.AppendAt(res.Offset, sh.lastGen, op.entry[:], sh.writeGen, op)
	case wake:
		off, err = l.Append(op.entry[:], sh.writeGen, op)
	default:
		off, err = l.AppendWithoutWake(op.entry[:], sh.writeGen, op)
	}
	if err != nil {
		op.release()
		if moved(err) {
			return sh.leadLost()
		}
		sh.logFailed(l, err)
		return sh.refused(err)
	}
	if off != res.Offset {
		panic(fmt.Sprintf("felix/cache: broken invariant: shard log assigned offset %d where its writer expected %d", off, res.Offset))
	}
	sh.appended, sh.lastGen = off+1, sh.writeGen
	sh.pending.trim(sh.log().End())
	sh.pending.push(off, key, expiresAt)
	if p := sh.primary(); p != nil {
		p.Appended() // the replica ships it now
	}
	return nil
}

// refused is what an operation the log refused with err (an append, a
// read, a watch's start) is told: the shard's stop when it is stopping
// (the store closing, the cache dropped, the shard released: the
// operation found the log closing after it checked the shard), so the
// caller hears why, and err otherwise.
func (sh *shard) refused(err error) error {
	if stop := sh.usable(); closing(stop) {
		return stop
	}
	return err
}

// flushOrWake writes what the shard's writers appended without a wake on
// the caller's goroutine when the log can (shardlog.Log.FlushHere: the
// committer idle, at most maxBytes queued, no fdatasync owed before the
// acknowledgement; the waiters are told before it returns), and wakes the
// committer for it otherwise. Called holding no lock of the shard: the
// waiters it tells take them.
func (sh *shard) flushOrWake(maxBytes int) {
	if maxBytes <= 0 || !sh.log().FlushHere(maxBytes) {
		sh.log().Wake()
	}
}

// writeOp is one write between its append and its acknowledgement. Pooled:
// steady-state writing allocates nothing.
type writeOp struct {
	sh    *shard
	l     *shardlog.Log // the log it was appended to
	w     WriteWaiter
	res   Written
	gen   uint32 // the generation it was appended at
	entry [1]shardlog.Entry
	// vouching: the log acknowledged it and a Quorum shard's part was
	// asked to vouch for it; the next Committed is the part's answer.
	vouching bool
}

var writeOps = sync.Pool{New: func() any { return new(writeOp) }}

func (op *writeOp) release() {
	*op = writeOp{}
	writeOps.Put(op)
}

// Committed is the log's acknowledgement, and at Quorum then the part's
// (quorum.go).
func (op *writeOp) Committed(first, last int64, err error) {
	sh, l, w, res := op.sh, op.l, op.w, op.res
	if p := sh.primary(); err == nil && sh.quorum && !op.vouching && p != nil {
		op.vouching = true
		p.Vouch(op.gen, first, last, op)
		return
	}
	vouching := op.vouching
	op.release()
	if err != nil && !vouching {
		sh.logFailed(l, err)
	}
	if w != nil {
		w.CacheWritten(res, err)
	}
}

// syncWrite turns the waiter into a call that returns the answer.
type syncWrite struct {
	ch  chan struct{}
	res Written
	err error
}

var syncWrites = sync.Pool{New: func() any { return &syncWrite{ch: make(chan struct{}, 1)} }}

func (s *syncWrite) CacheWritten(res Written, err error) {
	s.res, s.err = res, err
	s.ch <- struct{}{}
}
