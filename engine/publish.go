package engine

import (
	"sync"
	"sync/atomic"

	"github.com/felixbroker/felix/engine/shardlog"
)

// Record is one record to publish; a zero Timestamp means now.
type Record = shardlog.Entry

// AckRun says that Count records landed on Shard at offsets First onward.
type AckRun struct {
	Shard int
	First int64
	Count int
}

// PublishWaiter is told once when a publish is acknowledged at its stream's
// durability. runs lists what landed, per shard in shard order, and is
// valid only during the call; err is set when any part failed (runs then
// lists the parts that did land). It runs on a log goroutine and must not
// block.
type PublishWaiter interface {
	Published(runs []AckRun, err error)
}

// AckBatch is the acknowledgement of one flush of a shard's log: work
// deferred to it (AckBatch.Defer) runs once every publish the flush
// acknowledged has been told, with a FlushInfo.
type AckBatch = shardlog.AckBatch

// FlushInfo is what deferred work is told of its flush.
type FlushInfo = shardlog.FlushInfo

// BatchPublishWaiter is a PublishWaiter that is told, where the log's
// committer acknowledges the publish, with the flush's batch:
// PublishedIn instead of Published, so it can defer what is best done
// once per flush (a connection's write). Published is still what is
// called elsewhere: a failure, a stream kept in memory.
type BatchPublishWaiter interface {
	PublishWaiter
	PublishedIn(b *AckBatch, runs []AckRun)
}

// Publish appends recs, each to the shard its key chooses (no key: shard 0),
// in order within each shard, and tells w when all are acknowledged. It
// returns an error, and tells w nothing, when nothing was appended: an
// unknown shard owner (*NotLeaderError), a failed or closed log. It waits
// only while a shard's write buffer is full.
func (s *Stream) Publish(recs []Record, w PublishWaiter) error {
	return s.publish(recs, w, nil, nil)
}

// PublishDeferWake is Publish that leaves the committers of durable
// shards asleep, adding their logs to wakes: a caller that publishes
// every frame of one socket read this way and then calls wakes.Wake has
// each committer woken once, for the whole read, after it is done.
func (s *Stream) PublishDeferWake(recs []Record, w PublishWaiter, wakes *WakeList) error {
	return s.publish(recs, w, wakes, nil)
}

// PublishFrom is PublishDeferWake for a client that presented cred: a
// part bound for a shard another broker leads is handed, with cred, to the
// engine's Forwarder (Options.Forward), and acknowledged when that broker
// answers; without a Forwarder it is refused with *NotLeaderError. cred is
// valid only until PublishFrom returns.
func (s *Stream) PublishFrom(recs []Record, w PublishWaiter, wakes *WakeList, cred []byte) error {
	return s.publish(recs, w, wakes, cred)
}

func (s *Stream) publish(recs []Record, w PublishWaiter, wakes *WakeList, cred []byte) error {
	if len(recs) == 0 {
		return ErrEmptyPublish
	}
	op := publishOps.Get().(*publishOp)
	op.reset(w, wakes)
	op.cred = cred
	if one, single := s.singleShard(recs); single {
		return op.run(s, one, recs)
	}
	parts := op.split(s, recs)
	return op.runParts(s, parts)
}

// singleShard reports whether every record goes to one shard, and which.
func (s *Stream) singleShard(recs []Record) (int, bool) {
	if len(s.slots) == 1 {
		return 0, true
	}
	first := s.ShardFor(recs[0].Key)
	for i := 1; i < len(recs); i++ {
		if s.ShardFor(recs[i].Key) != first {
			return 0, false
		}
	}
	return first, true
}

// publishOp gathers the acknowledgements of one publish's shard parts.
// Pooled: steady-state publishing allocates nothing.
type publishOp struct {
	w       PublishWaiter
	wakes   *WakeList // nil: wake each committer at once
	cred    []byte    // the client's credential, for parts forwarded; valid during publish only
	pending atomic.Int32
	mu      sync.Mutex
	runs    []AckRun
	err     error
	parts   []partWaiter
	byShard map[int][]Record
	order   []int
}

type partWaiter struct {
	op    *publishOp
	shard int
	count int
}

var publishOps = sync.Pool{New: func() any { return &publishOp{byShard: map[int][]Record{}} }}

func (op *publishOp) reset(w PublishWaiter, wakes *WakeList) {
	op.w, op.wakes, op.err, op.cred = w, wakes, nil, nil
	op.runs = op.runs[:0]
	op.parts = op.parts[:0]
	op.order = op.order[:0]
	for k, v := range op.byShard {
		op.byShard[k] = v[:0]
	}
}

// run publishes a batch bound for one shard.
func (op *publishOp) run(s *Stream, shard int, recs []Record) error {
	op.parts = append(op.parts, partWaiter{op: op, shard: shard, count: len(recs)})
	op.pending.Store(1)
	if err := s.appendTo(shard, recs, &op.parts[0], op.wakes, op.cred); err != nil {
		op.release()
		return err
	}
	return nil
}

// split groups records by shard, keeping their order within each shard.
func (op *publishOp) split(s *Stream, recs []Record) []int {
	for i := range recs {
		sh := s.ShardFor(recs[i].Key)
		if len(op.byShard[sh]) == 0 {
			op.order = append(op.order, sh)
		}
		op.byShard[sh] = append(op.byShard[sh], recs[i])
	}
	sortInts(op.order)
	for _, sh := range op.order {
		op.parts = append(op.parts, partWaiter{op: op, shard: sh, count: len(op.byShard[sh])})
	}
	return op.order
}

// runParts appends each shard's part. A part no broker can take (a shard
// not held here that Ownership calls local, or one led elsewhere with no
// Forwarder) fails the whole publish before anything is appended; a part
// refused after others were appended (its log failed, ownership moved
// meanwhile, the Forwarder refused) is reported through the waiter with
// what did land.
func (op *publishOp) runParts(s *Stream, order []int) error {
	for _, sh := range order {
		if err := s.takeable(sh); err != nil {
			op.release()
			return err
		}
	}
	op.pending.Store(int32(len(order)))
	for i, sh := range order {
		if err := s.appendTo(sh, op.byShard[sh], &op.parts[i], op.wakes, op.cred); err != nil {
			if i == 0 {
				op.release()
				return err
			}
			for range order[i:] {
				op.partDone(nil, -1, 0, 0, err)
			}
			return nil
		}
	}
	return nil
}

// AppendToShard appends recs, in order and contiguously, to one shard, and
// returns the offset the first got; w (may be nil) is told when they are
// acknowledged at the stream's durability, on a log goroutine, and must
// not block nor append. Every record's key must choose that shard
// (ErrWrongShard otherwise). Like Publish it asks Ownership first, refuses
// a shard not held here with *NotLeaderError, and waits only while the
// shard's write buffer is full. Offsets are assigned before it returns, so
// a caller that serializes its own AppendToShard calls (an idempotent
// producer's sequence check) knows the order and the offsets its batches
// got.
func (s *Stream) AppendToShard(shard int, recs []Record, w shardlog.Waiter) (int64, error) {
	if shard < 0 || shard >= len(s.slots) {
		return 0, s.noShard(shard)
	}
	if len(recs) == 0 {
		return 0, ErrEmptyPublish
	}
	for i := range recs {
		if len(s.slots) > 1 && s.ShardFor(recs[i].Key) != shard {
			return 0, ErrWrongShard
		}
	}
	if local, leader := s.engine.owner.Leader(s.info.ID, shard); !local {
		return 0, &NotLeaderError{Stream: s.info.ID, Shard: shard, Leader: leader}
	}
	sh, err := s.heldShard(shard)
	if err != nil {
		return 0, err
	}
	first, err := sh.log.Append(recs, s.info.Generation, w)
	if err != nil {
		return 0, s.appendRefusal(sh, err)
	}
	return first, nil
}

// takeable is what appendTo would refuse shard's part with at once
// (nil when it would append or forward it), asked of every part of a
// split publish before the first is appended.
func (s *Stream) takeable(shard int) error {
	if local, leader := s.engine.owner.Leader(s.info.ID, shard); !local {
		if s.engine.opts.Forward != nil {
			return nil
		}
		return &NotLeaderError{Stream: s.info.ID, Shard: shard, Leader: leader}
	}
	_, err := s.heldShard(shard)
	return err
}

// appendTo checks ownership and appends to one shard's log; with wakes, a
// durable log's committer is left for wakes.Wake. A shard another broker
// leads is the Forwarder's, with the client's credential. One Ownership
// calls local but whose log is not open here (Placement and Ownership
// disagree for a moment, or the log failed to open) is refused with
// *NotLeaderError: nothing is appended anywhere.
func (s *Stream) appendTo(shard int, recs []Record, w shardlog.Waiter, wakes *WakeList, cred []byte) error {
	if local, leader := s.engine.owner.Leader(s.info.ID, shard); !local {
		if f := s.engine.opts.Forward; f != nil {
			return f.Forward(s.info.ID, shard, recs, cred, w)
		}
		return &NotLeaderError{Stream: s.info.ID, Shard: shard, Leader: leader}
	}
	sh, err := s.heldShard(shard)
	if err != nil {
		return err
	}
	if d, ok := sh.log.(*diskLog); ok && wakes != nil {
		l, err := d.appendWithoutWake(recs, s.info.Generation, w)
		if err != nil {
			return s.appendRefusal(sh, err)
		}
		wakes.add(l)
		return nil
	}
	if _, err := sh.log.Append(recs, s.info.Generation, w); err != nil {
		return s.appendRefusal(sh, err)
	}
	return nil
}

// WakeList gathers the shard logs appended to by PublishDeferWake, to wake
// each committer once. It belongs to one goroutine (a connection's event
// loop), and is reused: steady state allocates nothing.
type WakeList struct {
	logs []*shardlog.Log
}

func (wl *WakeList) add(l *shardlog.Log) {
	for _, x := range wl.logs {
		if x == l {
			return
		}
	}
	wl.logs = append(wl.logs, l)
}

// FlushHere has each log added since the last Wake do its committer's
// work on the caller's goroutine where that is cheap (shardlog.Log.FlushHere
// with at most maxBytes queued: a page-cache write, no fdatasync, the
// committer idle), and drops it from the list; the rest are left for
// Wake. The acknowledgements of what it wrote are told before it returns,
// on the caller's goroutine.
func (wl *WakeList) FlushHere(maxBytes int) {
	kept := wl.logs[:0]
	for _, l := range wl.logs {
		if !l.FlushHere(maxBytes) {
			kept = append(kept, l)
		}
	}
	clear(wl.logs[len(kept):])
	wl.logs = kept
}

// Wake wakes the committer of every log added since the last Wake.
func (wl *WakeList) Wake() {
	for i, l := range wl.logs {
		l.Wake()
		wl.logs[i] = nil
	}
	wl.logs = wl.logs[:0]
}

func (p *partWaiter) Committed(first, last int64, err error) {
	p.op.partDone(nil, p.shard, first, int(last-first+1), err)
}

// CommittedIn is Committed from the committer of a flush (b).
func (p *partWaiter) CommittedIn(b *AckBatch, first, last int64) {
	p.op.partDone(b, p.shard, first, int(last-first+1), nil)
}

// partDone records one part's outcome; the last one tells the waiter, with
// b when the flush that completed the publish gave one and nothing failed.
func (op *publishOp) partDone(b *AckBatch, shard int, first int64, count int, err error) {
	op.mu.Lock()
	if err != nil {
		if op.err == nil {
			op.err = err
		}
	} else {
		op.runs = append(op.runs, AckRun{Shard: shard, First: first, Count: count})
	}
	op.mu.Unlock()
	if op.pending.Add(-1) != 0 {
		return
	}
	sortRuns(op.runs)
	op.tell(b)
	op.release()
}

func (op *publishOp) tell(b *AckBatch) {
	if op.w == nil {
		return
	}
	if bw, ok := op.w.(BatchPublishWaiter); ok && b != nil && op.err == nil {
		bw.PublishedIn(b, op.runs)
		return
	}
	op.w.Published(op.runs, op.err)
}

func (op *publishOp) release() {
	op.w = nil
	publishOps.Put(op)
}

// sortInts and sortRuns are insertion sorts: a publish spans few shards, and
// sort.Slice would allocate.
func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

func sortRuns(a []AckRun) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j].Shard < a[j-1].Shard; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}
