package cache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// CounterValue answers counter_add and counter_get: the sum (for an add,
// including itself) and the offset of the last add folded into it. A
// counter never written has Exists false, which is not a sum of zero.
type CounterValue struct {
	Exists bool
	Sum    int64
	Offset int64
}

// CounterWaiter is told once when an add is acknowledged at the cache's
// FsyncMode, or failed. It runs on a log goroutine and must not block.
type CounterWaiter interface {
	CounterAdded(v CounterValue, err error)
}

// Counter records in a shard's counters log (segment format, frozen):
//
//	add:        key | delta (i64)                           flags 0
//	checkpoint: key | sum (i64) | offset of the last add (i64)   flags FlagControl
//
// A checkpoint carries the sum of every add before it, so compaction may
// drop everything of its key before it without moving the sum.
const (
	deltaBytes      = 8
	checkpointBytes = 16
	// checkpointBatch bounds the checkpoints appended in one Append.
	checkpointBatch = 1024
)

// counter is one key's folded state.
type counter struct {
	sum        int64
	last       int64 // offset of the last add folded in
	checkpoint int64 // offset of the key's latest checkpoint; -1 when none
	dirty      bool  // adds since that checkpoint
}

// counterSlot is a shard's counters: a log of their own beside the values
// (a counter and a cache value sharing a key are unrelated), opened on the
// first counter operation or at open when the shard has one; a replicated
// shard's at its open, and held as its part 1 (counter_replicate.go).
type counterSlot struct {
	sh *shard

	// mu is the counters' writer lock: it guards everything below and is
	// held across an add's fold and its append, so sums follow log order.
	mu       sync.Mutex
	logs     *shardlog.Healer // nil until opened; reopened once space is back
	sums     map[string]*counter
	appended int64
	failErr  error
	compacts int64     // log bytes after the last compaction
	gen      uint32    // the generation appends carry
	lastGen  uint32    // the generation of the log's last record, as the writer knows it
	part     *heldPart // a replicated shard's part 1; nil otherwise
	led      uint32    // the generation sums were folded at while leading (0: not yet)

	visMu   sync.Mutex // wakes a get waiting for its add's commit
	visCond sync.Cond
	visErr  error // failErr, readable under visMu

	// parked counts the gets waiting for their part to vouch for an add
	// at Quorum (CounterGetAsync), at most parkedReadsMax.
	parked atomic.Int32
}

func (cs *counterSlot) dir() (vfs.FS, string) {
	fs, root := cs.sh.c.store.fsFor(cs.sh.c.info.Config)
	return fs, countersDir(root, cs.sh.c.info.ID, cs.sh.index)
}

// openIfPresent opens the counters log at shard open when one exists.
func (cs *counterSlot) openIfPresent() error {
	if !cs.sh.c.info.Config.Durable {
		return nil
	}
	fs, dir := cs.dir()
	if names, err := fs.List(dir); err != nil || len(names) == 0 {
		return nil
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.open()
}

// open opens and folds the log; called with mu held. Once open, it
// returns why the counters stopped, or nil.
func (cs *counterSlot) open() error {
	if cs.logs != nil {
		return cs.failErr
	}
	if !cs.sh.c.info.Config.Durable {
		return ErrNoStorage
	}
	if err := cs.sh.usable(); err != nil {
		return err
	}
	fs, dir := cs.dir()
	l, err := cs.sh.c.store.openLog(cs.sh.c.info, fs, dir, cs.onVisible)
	if err != nil {
		return err
	}
	if cs.sh.c.replicated() {
		return cs.openReplicated(fs, dir, l)
	}
	sums, err := fold(l)
	if err != nil {
		l.Close()
		return cs.foldError(err)
	}
	cs.logs = shardlog.NewHealer(l, cs.takeLog, nil) // heal.go
	cs.sums, cs.appended, cs.compacts = sums, l.End(), l.Stats().Bytes
	return nil
}

func (cs *counterSlot) foldError(err error) error {
	return fmt.Errorf("felix/cache: folding the counters of shard %d: %w", cs.sh.index, err)
}

// fold replays a counters log into sums: a checkpoint sets its key's sum,
// an add adds to it.
func fold(l *shardlog.Log) (map[string]*counter, error) {
	sums := map[string]*counter{}
	buf := make([]byte, 0, rebuildReadBytes+readBufBytes)
	for from := l.Start(); from < l.End(); {
		out, next, err := l.Read(from, rebuildReadBytes, buf[:0])
		if err != nil {
			return nil, err
		}
		it := segment.NewIter(out)
		for r, ok := it.Next(); ok; r, ok = it.Next() {
			if err := apply(sums, &r); err != nil {
				return nil, err
			}
		}
		if it.Err() != nil {
			return nil, it.Err()
		}
		buf, from = out, next
	}
	return sums, nil
}

func apply(sums map[string]*counter, r *segment.Record) error {
	if r.Flags&segment.FlagGenerationStart != 0 {
		return nil // a Quorum leadership's start (quorum.go): no counter's
	}
	c := sums[string(r.Key)]
	if c == nil {
		c = &counter{checkpoint: -1}
		sums[string(r.Key)] = c
	}
	if isControl(r) {
		if len(r.Value) != checkpointBytes {
			return fmt.Errorf("checkpoint at offset %d has %d value bytes", r.Offset, len(r.Value))
		}
		c.sum = int64(binary.LittleEndian.Uint64(r.Value))
		c.last = int64(binary.LittleEndian.Uint64(r.Value[8:]))
		c.checkpoint, c.dirty = r.Offset, false
		return nil
	}
	if len(r.Value) != deltaBytes {
		return fmt.Errorf("add at offset %d has %d value bytes", r.Offset, len(r.Value))
	}
	c.sum += int64(binary.LittleEndian.Uint64(r.Value))
	c.last, c.dirty = r.Offset, true
	return nil
}

func (cs *counterSlot) onVisible(_, _ int64, _ []byte) {
	cs.visMu.Lock()
	cs.visCond.Broadcast()
	cs.visMu.Unlock()
	cs.sh.moved()
}

// fail stops the counters: their log failed (a failure for lack of space
// until the log is reopened, heal.go; any other until the cache is opened
// again) or they are closing, which outranks a failure. A write they stop
// is told refusalOf(err); mu held.
func (cs *counterSlot) fail(err error) {
	if cs.failErr == nil || closing(err) && !closing(cs.failErr) {
		cs.failErr = refusalOf(err)
	}
	cs.visMu.Lock()
	if cs.visErr == nil || closing(err) {
		cs.visErr = err
	}
	cs.visCond.Broadcast()
	cs.visMu.Unlock()
}

// add folds delta into the key's sum and appends it; w is told the sum
// including it once the add is acknowledged.
func (cs *counterSlot) add(key []byte, delta int64, w CounterWaiter) error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if err := cs.open(); err != nil {
		return err
	}
	if err := cs.leadLocked(); err != nil {
		return err
	}
	c := cs.sums[string(key)]
	sum := delta
	if c != nil {
		var ok bool
		if sum, ok = addChecked(c.sum, delta); !ok {
			return ErrCounterOverflow
		}
	}
	op := counterOps.Get().(*counterOp)
	op.cs, op.w, op.gen, op.part = cs, w, cs.gen, cs.part
	off := cs.appended
	op.res = CounterValue{Exists: true, Sum: sum, Offset: off}
	binary.LittleEndian.PutUint64(op.val[:], uint64(delta))
	op.entry[0] = shardlog.Entry{Key: key, Value: op.val[:]}
	l := cs.logs.Log()
	op.l = l
	got, err := cs.append(l, op.entry[:], op)
	if err != nil {
		op.release()
		if moved(err) {
			return cs.leadLost()
		}
		cs.logFailed(l, err)
		return err
	}
	if got != off {
		panic(fmt.Sprintf("felix/cache: broken invariant: counters log assigned offset %d where its writer expected %d", got, off))
	}
	cs.appended = off + 1
	cs.shipped()
	if c == nil {
		c = &counter{checkpoint: -1}
		cs.sums[string(key)] = c
	}
	c.sum, c.last, c.dirty = sum, off, true
	return nil
}

func addChecked(a, b int64) (int64, bool) {
	if (b > 0 && a > math.MaxInt64-b) || (b < 0 && a < math.MinInt64-b) {
		return 0, false
	}
	return a + b, true
}

// get returns the key's sum once every add folded into it is committed.
// Async, a get whose add is not yet vouched for at Quorum reports wait,
// parked when there is r to tell the answer (and nothing parked without);
// otherwise it waits.
func (cs *counterSlot) get(key []byte, async bool, r CounterReader) (_ CounterValue, wait bool, _ error) {
	cs.mu.Lock()
	if err := cs.open(); err != nil {
		cs.mu.Unlock()
		return CounterValue{}, false, err
	}
	if err := cs.leadLocked(); err != nil {
		cs.mu.Unlock()
		return CounterValue{}, false, err
	}
	c := cs.sums[string(key)]
	if c == nil {
		cs.mu.Unlock()
		return CounterValue{}, false, nil
	}
	v := CounterValue{Exists: true, Sum: c.sum, Offset: c.last}
	l, led, part := cs.logs.Log(), cs.led, cs.part
	cs.mu.Unlock()
	cs.visMu.Lock()
	for l.End() <= v.Offset && cs.visErr == nil {
		cs.visCond.Wait()
	}
	visErr := cs.visErr
	// Let go of visMu before waiting for the part: the log's committer
	// takes it (onVisible) to publish every later add, the vouch of which
	// this wait may be behind (found by the simulator, seed 886).
	cs.visMu.Unlock()
	if l.End() <= v.Offset {
		return CounterValue{}, false, visErr
	}
	if part != nil && !leadsAt(part, led) { // a replicated shard answers only while it leads
		return CounterValue{}, false, cs.sh.c.notLeader(cs.sh.index)
	}
	switch {
	case part == nil || !cs.sh.quorum:
	case async:
		return cs.vouchRead(part, led, v, r)
	default:
		if err := awaitVouched(part, led, v.Offset); err != nil {
			return CounterValue{}, false, err
		}
	}
	return v, false, nil
}

// compact checkpoints every counter with adds since its last checkpoint,
// then compacts the sealed segments, dropping each key's records before
// its latest checkpoint. The Commit syncs the log first, so no add is
// dropped before the checkpoint that carries it is durable.
func (cs *counterSlot) compact() (shardlog.CompactionStats, error) {
	cs.sh.compactRunning.Lock()
	defer cs.sh.compactRunning.Unlock()
	cs.mu.Lock()
	h := cs.logs
	cs.mu.Unlock()
	if h == nil {
		return shardlog.CompactionStats{}, nil
	}
	h.Lock() // no reopen while the log is compacted
	defer h.Unlock()
	cs.mu.Lock()
	floor, ok := cs.compactFloor()
	if !ok {
		cs.mu.Unlock()
		return shardlog.CompactionStats{}, nil // a follower's log is compacted once it leads
	}
	err := cs.checkpointAll()
	l := h.Log()
	cs.mu.Unlock()
	if err != nil {
		return shardlog.CompactionStats{}, err
	}
	st, err := l.Compact(keepFrom(floor, func(r *segment.Record) bool {
		cs.mu.Lock()
		defer cs.mu.Unlock()
		c := cs.sums[string(r.Key)]
		return c == nil || r.Offset >= c.checkpoint
	}))
	if errors.Is(err, shardlog.ErrNothingToCompact) {
		return st, nil
	}
	if err == nil {
		cs.mu.Lock()
		cs.compacts = l.Stats().Bytes
		cs.mu.Unlock()
	}
	return st, err
}

// checkpointAll appends a checkpoint for every dirty counter; mu held.
func (cs *counterSlot) checkpointAll() error {
	if cs.failErr != nil {
		return cs.failErr
	}
	var keys []string
	for k, c := range cs.sums {
		if c.dirty {
			keys = append(keys, k)
		}
	}
	for len(keys) > 0 {
		n := min(len(keys), checkpointBatch)
		entries := make([]shardlog.Entry, n)
		for i, k := range keys[:n] {
			c := cs.sums[k]
			v := make([]byte, checkpointBytes)
			binary.LittleEndian.PutUint64(v, uint64(c.sum))
			binary.LittleEndian.PutUint64(v[8:], uint64(c.last))
			entries[i] = shardlog.Entry{Key: []byte(k), Value: v, Flags: segment.FlagControl}
		}
		l := cs.logs.Log()
		first, err := cs.append(l, entries, nil)
		if err != nil {
			if moved(err) {
				return cs.leadLost()
			}
			cs.logFailed(l, err)
			return err
		}
		cs.shipped()
		for i, k := range keys[:n] {
			c := cs.sums[k]
			c.checkpoint, c.dirty = first+int64(i), false
		}
		cs.appended = first + int64(n)
		keys = keys[n:]
	}
	return nil
}

// due reports whether the counters log has grown enough to compact.
func (cs *counterSlot) due() bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.logs == nil {
		return false
	}
	grown := cs.logs.Log().Stats().Bytes - cs.compacts
	return grown >= cs.sh.c.store.opts.CompactMinBytes && grown >= cs.compacts
}

func (cs *counterSlot) len() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.sums)
}

// close stops the counters with err (the shard's stop) and closes their
// log, stopping a reopen in progress (whose takeLog takes mu: so it is
// let go first).
func (cs *counterSlot) close(err error) error {
	cs.mu.Lock()
	h := cs.logs
	if h != nil {
		cs.fail(err)
	}
	if cs.part != nil {
		cs.part.release() // the replica lets go of the log before it closes
	}
	cs.mu.Unlock()
	if h == nil {
		return nil
	}
	return h.Close()
}

// counterOp is one add between its append and its acknowledgement; pooled.
type counterOp struct {
	cs    *counterSlot
	l     *shardlog.Log // the log it was appended to
	w     CounterWaiter
	res   CounterValue
	gen   uint32    // the generation it was appended at
	part  *heldPart // the part it was appended to (nil: a cache of one replica)
	val   [deltaBytes]byte
	entry [1]shardlog.Entry
	// vouching: the log acknowledged it and a Quorum shard's part was
	// asked to vouch for it; the next Committed is the part's answer.
	vouching bool
}

var counterOps = sync.Pool{New: func() any { return new(counterOp) }}

func (op *counterOp) release() {
	*op = counterOp{}
	counterOps.Put(op)
}

func (op *counterOp) Committed(first, last int64, err error) {
	cs, l, w, res := op.cs, op.l, op.w, op.res
	if err == nil && cs.sh.quorum && !op.vouching && op.part != nil {
		op.vouching = true
		op.part.Vouch(op.gen, first, last, op) // quorum.go
		return
	}
	vouching := op.vouching
	op.release()
	if err != nil && !vouching {
		cs.mu.Lock()
		cs.logFailed(l, err)
		cs.mu.Unlock()
	}
	if w != nil {
		w.CounterAdded(res, err)
	}
}

type syncAdd struct {
	ch  chan struct{}
	res CounterValue
	err error
}

var syncAdds = sync.Pool{New: func() any { return &syncAdd{ch: make(chan struct{}, 1)} }}

func (s *syncAdd) CounterAdded(v CounterValue, err error) {
	s.res, s.err = v, err
	s.ch <- struct{}{}
}

// CounterAdd folds delta into the counter at key and waits for the
// acknowledgement; the answer is the sum including this add. At least
// once: an add retried after a lost acknowledgement is counted twice (adds
// carry no identity to deduplicate). Offered only by a durable cache
// (ErrNoStorage otherwise).
func (c *Cache) CounterAdd(key []byte, delta int64) (CounterValue, error) {
	s := syncAdds.Get().(*syncAdd)
	defer syncAdds.Put(s)
	if err := c.CounterAddAsync(key, delta, s); err != nil {
		return CounterValue{}, err
	}
	<-s.ch
	return s.res, s.err
}

// CounterAddAsync is CounterAdd without the wait: w is told the answer. An
// error returned means nothing was appended and w is told nothing.
func (c *Cache) CounterAddAsync(key []byte, delta int64, w CounterWaiter) error {
	c.store.ops.count(OpCounterAdd)
	sh, _, err := c.route(key)
	if err != nil {
		return err
	}
	if err := c.owned(sh.index); err != nil {
		return err
	}
	return sh.counters.add(key, delta, w)
}

// CounterGet returns the counter at key: Exists false when it was never
// written. It waits, if an add of it is in flight, for that add's commit.
func (c *Cache) CounterGet(key []byte) (CounterValue, error) {
	c.store.ops.count(OpCounterGet)
	sh, _, err := c.route(key)
	if err != nil {
		return CounterValue{}, err
	}
	v, _, err := sh.counters.get(key, false, nil)
	return v, err
}

// CounterReader is told a parked counter get's answer (CounterGetAsync).
// It runs on whichever goroutine the part's vouch comes on, possibly
// before CounterGetAsync returns, and must not block.
type CounterReader interface {
	CounterRead(v CounterValue, err error)
}

// CounterGetAsync is CounterGet for a caller that must never wait for a
// Quorum commit: a get whose sum holds an add its part has not vouched for
// yet is parked, and returns wait true; r is then told the answer (the
// sum, or the part's refusal: no_quorum past the publish timeout, the
// leadership over). With r nil it parks nothing and returns wait true,
// as GetAsync does (and is not counted: the caller asks again). At most
// parkedReadsMax are parked per shard (ErrReadsParkedFull beyond). It may
// still wait for one group commit of the counters' log, as CounterGet
// does, on a cache at any level.
func (c *Cache) CounterGetAsync(key []byte, r CounterReader) (_ CounterValue, wait bool, _ error) {
	sh, _, err := c.route(key)
	if err == nil {
		var v CounterValue
		if v, wait, err = sh.counters.get(key, true, r); wait && r == nil {
			return CounterValue{}, true, nil
		}
		c.store.ops.count(OpCounterGet)
		return v, wait, err
	}
	c.store.ops.count(OpCounterGet)
	return CounterValue{}, false, err
}
