package engine

import (
	"context"
	"errors"
	"math"
	"sync"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment"
)

// StartKind is where a subscription starts.
type StartKind uint8

// Where a subscription starts.
const (
	StartLatest   StartKind = iota // records published after it is registered
	StartEarliest                  // the oldest record retention holds
	StartOffset                    // SubscribeOptions.Offset
	StartTime                      // the first record at or after SubscribeOptions.Time
)

// Overflow is what a full subscriber queue does with the next record.
type Overflow uint8

// The overflow policies; DropNew is the default.
const (
	DropNew    Overflow = iota // drop the incoming record
	DropOld                    // drop the oldest queued record
	Disconnect                 // end the subscription with a LaggedError
)

// Queue bounds when SubscribeOptions leaves them zero.
const (
	DefaultQueueRecords = 10_000
	DefaultQueueBytes   = 4 << 20
)

// ErrEndReached is how a subscription with UntilEnd ends: every record
// below its end offset was handed to the reader or dropped.
var ErrEndReached = errors.New("felix/engine: the subscription reached its end")

// SubscribeOptions configure a subscription.
type SubscribeOptions struct {
	Start        StartKind
	Offset       int64 // with StartOffset
	Time         int64 // with StartTime: unix ns
	QueueRecords int
	QueueBytes   int
	Overflow     Overflow
	// UntilEnd ends the subscription with ErrEndReached once every record
	// below its end has been handed to the reader (or dropped); records
	// from the end on are not delivered. The end is End, or the shard's
	// end when the subscription registers if End is negative. Control
	// records are not delivered without Control, so the offsets a reader
	// sees may stop short of the end: ErrEndReached is how it learns it is
	// there.
	UntilEnd bool
	End      int64
	// Control hands the shard's control records (a replicated shard's
	// generation start) to the reader too, where without it they are
	// skipped and their offsets look like a drop's gap. They are never
	// dropped by the overflow policy and are outside the queue's bounds,
	// so a reader that takes them can tell every gap that is not a record
	// from a drop exactly. Delivered and Dropped count records only.
	Control bool
}

// Subscription reads one shard: history from its start offset, then live
// records, with no gap and no duplicate at the join. Live records wait in a
// bounded queue; when it is full the overflow policy decides, and a drop is
// visible to the reader as a gap in offsets and in Stats (with
// SubscribeOptions.Control, a gap is exactly a drop: the offsets of
// control records come as control records). A publisher never
// waits for a subscriber. Next is for one goroutine; Close and Stats are
// safe from any.
type Subscription struct {
	shard  *Shard
	opts   SubscribeOptions
	first  int64
	notify chan struct{}

	// mu guards the fields below. Lock order: Shard.subMu, then mu.
	mu        sync.Mutex
	endAt     int64 // with UntilEnd: the offset delivery stops at; final once registered
	next      int64 // the offset the reader gets next (or its gap starts at)
	live      bool  // registered for live records: history is caught up
	queue     byteQueue
	dropped   uint64
	delivered uint64
	err       error // why the subscription ended
}

// SubscriptionStats is a snapshot of a subscription's counters.
type SubscriptionStats struct {
	Next      int64  // offset delivery has reached
	Delivered uint64 // records handed to the reader (control records not counted)
	Dropped   uint64 // records dropped by the overflow policy or retention
	Queued    int    // records waiting (control records included)
	Live      bool
}

// Subscribe registers a subscription on the shard. Latest starts at the
// shard's end; Earliest at its start; Offset at the offset given, which must
// lie within [start, end] (an *OffsetError otherwise); Time at the first
// record at or after the time (OffsetForTime, which reads the disk: call
// a subscribe by time off an event loop), or the start if retention has
// passed it since. A shard not ReadReady refuses with its error: its end,
// which Latest and UntilEnd take, is not known yet.
func (sh *Shard) Subscribe(opts SubscribeOptions) (*Subscription, error) {
	atTime := int64(0)
	if opts.Start == StartTime {
		off, err := sh.OffsetForTime(opts.Time)
		if err != nil {
			return nil, err
		}
		atTime = off
	}
	if opts.QueueRecords <= 0 {
		opts.QueueRecords = DefaultQueueRecords
	}
	if opts.QueueBytes <= 0 {
		opts.QueueBytes = DefaultQueueBytes
	}
	s := &Subscription{shard: sh, opts: opts, notify: make(chan struct{}, 1)}
	s.queue = byteQueue{maxBytes: opts.QueueBytes, maxRecords: opts.QueueRecords}
	sh.subMu.Lock()
	defer sh.subMu.Unlock()
	if sh.closed != nil {
		return nil, sh.closed
	}
	if err := sh.ReadReady(); err != nil {
		return nil, err
	}
	start, end := sh.log.Start(), sh.log.End()
	switch opts.Start {
	case StartLatest:
		s.next, s.live = end, true
	case StartEarliest:
		s.next = start
	case StartOffset:
		if opts.Offset < start || opts.Offset > end {
			kind := ErrOffsetBelowStart
			if opts.Offset > end {
				kind = ErrOffsetPastEnd
			}
			return nil, &OffsetError{Offset: opts.Offset, Start: start, End: end, Kind: kind}
		}
		s.next = opts.Offset
	case StartTime:
		s.next = min(max(atTime, start), end)
	}
	s.first, s.endAt = s.next, opts.End
	if opts.UntilEnd && opts.End < 0 {
		s.endAt = end
	}
	sh.subs[s] = struct{}{}
	return s, nil
}

// readGate is what a log implements when its end may not be served yet:
// a replicated shard whose leadership on this broker has not committed its
// generation start, whose end may lie below what its predecessor
// acknowledged until then. ReadGate returns the refusal, or nil.
type readGate interface{ ReadGate() error }

// ReadReady reports whether the shard's end can be served now: nil, or
// the refusal (a *NotLeaderError, retryable) of a replicated shard whose
// new leadership on this broker has not committed its generation start.
// Subscribe refuses with it; a describe withholds the shard's figures.
func (sh *Shard) ReadReady() error {
	if g, ok := sh.log.(readGate); ok {
		return g.ReadGate()
	}
	return nil
}

// First is the offset the subscription started at.
func (s *Subscription) First() int64 { return s.first }

// EndOffset is the offset a subscription with UntilEnd stops at; ok is
// false without UntilEnd.
func (s *Subscription) EndOffset() (end int64, ok bool) { return s.endAt, s.opts.UntilEnd }

// atEnd reports whether a subscription with UntilEnd has handed over
// every record below its end; mu held.
func (s *Subscription) atEnd() bool {
	return s.opts.UntilEnd && s.queue.empty() && s.next >= s.endAt
}

// limit is the offset the subscription delivers up to: its end, or none.
func (s *Subscription) limit() int64 {
	if s.opts.UntilEnd {
		return s.endAt
	}
	return math.MaxInt64
}

// Next waits for records and appends whole framed records (segment format,
// each carrying its offset; walk them with segment.NewIter) to dst, up to
// maxBytes but always at least one. It returns the subscription's end
// (a *LaggedError, ErrStreamDeleted, ErrClosed, or ErrEndReached once a
// subscription with UntilEnd is there) once records stop, or ctx's error.
func (s *Subscription) Next(ctx context.Context, dst []byte, maxBytes int) ([]byte, error) {
	for {
		s.mu.Lock()
		switch {
		case !s.queue.empty():
			n := s.queue.data()
			dst = s.queue.popInto(dst, maxBytes)
			s.delivered += uint64(n - s.queue.data())
			s.mu.Unlock()
			return dst, nil
		case s.atEnd():
			s.mu.Unlock()
			return dst, ErrEndReached
		case s.err != nil:
			err := s.err
			s.mu.Unlock()
			return dst, err
		case !s.live:
			from := s.next
			s.mu.Unlock()
			out, caught, err := s.catchUp(from, dst, maxBytes)
			if err != nil || len(out) > len(dst) {
				return out, err
			}
			if caught {
				continue
			}
		default:
			s.mu.Unlock()
		}
		select {
		case <-s.notify:
		case <-ctx.Done():
			return dst, ctx.Err()
		}
	}
}

// catchUp reads history from the log. When it finds nothing more it tries
// to go live: under the shard's subscriber lock, so no live record can slip
// between the last read and the registration; caught reports that it did.
func (s *Subscription) catchUp(from int64, dst []byte, maxBytes int) (out []byte, caught bool, err error) {
	sh := s.shard
	out, next, err := sh.log.Read(from, maxBytes, dst)
	var oe *shardlog.OffsetError
	if errors.As(err, &oe) && errors.Is(err, shardlog.ErrBelowStart) {
		// Retention removed records before the reader reached them: a drop.
		s.mu.Lock()
		s.dropped += uint64(oe.Start - from)
		s.next = oe.Start
		s.mu.Unlock()
		return dst, true, nil
	}
	if err != nil {
		return dst, false, err
	}
	if next > from {
		limit := s.limit()
		out, kept, records := dropControl(out, len(dst), limit, s.opts.Control)
		s.mu.Lock()
		s.next = min(next, limit)
		s.delivered += uint64(records)
		s.mu.Unlock()
		return out, kept == 0, nil
	}
	sh.subMu.Lock()
	s.mu.Lock()
	// Caught up once nothing lies between the log's end and where the
	// subscription is. An end below it (a replicated shard whose
	// leadership here ended: the end is then this replica's known commit)
	// is caught up too, so the subscription waits for what the log hands
	// over live rather than reading nothing for ever; records below its
	// offset are skipped, and a gap sends it back here (offer).
	if s.err == nil && sh.log.End() <= s.next {
		s.live = true
	}
	s.mu.Unlock()
	sh.subMu.Unlock()
	return dst, true, nil
}

// dropControl removes records at or past limit from out[from:], and
// control records unless keepControl, and returns the rest with how many
// it kept and how many of those are records (not control records).
func dropControl(out []byte, from int, limit int64, keepControl bool) (_ []byte, kept, records int) {
	it := segment.NewIter(out[from:])
	w := from
	for {
		at := from + it.Pos()
		r, ok := it.Next()
		if !ok {
			break
		}
		size := r.Size()
		control := r.Flags&segment.FlagControl != 0
		if r.Offset < limit && (!control || keepControl) {
			w += copy(out[w:], out[at:at+size])
			kept++
			if !control {
				records++
			}
		}
	}
	return out[:w], kept, records
}

// offer queues the live records of one flush; called under Shard.subMu.
// It reports whether the subscription ended (Disconnect). Records that do
// not follow on from the subscription's next offset send it back to
// reading history from there.
func (s *Subscription) offer(records []byte) (ended bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.live || s.err != nil {
		return false
	}
	added, limit := false, s.limit()
	it := segment.NewIter(records)
	for {
		at := it.Pos()
		r, ok := it.Next()
		if !ok || r.Offset >= limit {
			break
		}
		if r.Offset < s.next {
			continue
		}
		if r.Offset > s.next {
			// A gap in what the log hands over live: a replicated shard
			// whose leadership left this broker and came back hands over
			// from the new leadership's commit on, and what was
			// committed meanwhile never came through here. It is in the
			// log: read it as history, then go live again (catchUp).
			s.live = false
			s.wake()
			return false
		}
		size := r.Size()
		if r.Flags&segment.FlagControl != 0 {
			if s.opts.Control {
				s.queue.pushControl(records[at : at+size])
				added = true
			}
			s.next = r.Offset + 1 // passed: an end beyond it can be reached
			continue
		}
		if !s.queue.fits(size) {
			switch s.opts.Overflow {
			case Disconnect:
				s.end(&LaggedError{FirstMissed: r.Offset})
				return true
			case DropOld:
				for s.queue.data() > 0 && !s.queue.fits(size) {
					s.queue.dropOldest()
					s.dropped++
				}
			}
		}
		if s.queue.fits(size) {
			s.queue.push(records[at : at+size])
			added = true
		} else {
			s.dropped++
		}
		s.next = r.Offset + 1
	}
	if added || s.atEnd() {
		s.wake()
	}
	return false
}

// end records why the subscription ended and wakes the reader; mu held.
func (s *Subscription) end(err error) {
	if s.err == nil {
		s.err = err
	}
	s.live = false
	s.wake()
}

func (s *Subscription) wake() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// Close ends the subscription; Next returns ErrClosed once the queue is
// drained. Closing twice is harmless.
func (s *Subscription) Close() {
	s.shard.subMu.Lock()
	delete(s.shard.subs, s)
	s.shard.subMu.Unlock()
	s.mu.Lock()
	s.end(ErrClosed)
	s.mu.Unlock()
}

// Stats returns the subscription's counters.
func (s *Subscription) Stats() SubscriptionStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return SubscriptionStats{Next: s.next, Delivered: s.delivered, Dropped: s.dropped, Queued: s.queue.records, Live: s.live}
}
