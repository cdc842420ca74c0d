package client

import (
	"context"
	"fmt"
	"iter"
	"math"
	"sync"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// Subscription reads one shard of a stream over a connection of its own,
// so that a slow reader holds back only itself: when its buffer is full the
// connection stops reading, and the broker's queue and overflow policy
// decide, never blocking the broker's publishers nor this client's other
// requests. Next and Events are for one reader at a time; Close, Stats and
// the accessors are safe from any goroutine.
type Subscription struct {
	client *Client
	stream Stream
	shard  int
	notify chan struct{} // capacity 1: an event or the end arrived

	// mu guards the fields below. Lock order: mu, then conn.mu.
	mu        sync.Mutex
	conn      *conn // the subscription's own connection
	id        uint64
	attached  bool  // registered on conn under id
	first     int64 // SUBSCRIBED's first offset
	endAt     int64 // SUBSCRIBED's end offset; -1 without one
	next      int64 // the offset the reader is due next
	ring      []event
	head, n   int
	missed    uint64                  // records missed before a control offset the reader passed: counted on the next event
	room      chan struct{}           // closed when the reader takes an event from a full ring; nil if nobody waits
	end       *SubscriptionEndedError // why it ended; given once the queue is drained
	closed    bool                    // Close was called
	delivered uint64
}

// SubscriptionEndedError says why a subscription ended and where to resume.
// errors.Is matches its cause: ErrSubscriberLagged, ErrNotFound (the stream
// was deleted), ErrShuttingDown, ErrNotLeader (the shard moved),
// ErrConnectionLost, ErrClosed, or ErrEndReached (an Until's end: not a
// failure).
type SubscriptionEndedError struct {
	Stream Stream
	Shard  int
	// Code is the broker's code; 0 for a lost connection or a close.
	Code Code
	// FirstMissedOffset is the first record the subscriber lost, when the
	// subscription ended because it fell behind.
	FirstMissedOffset *int64
	// ResumeOffset is the offset after the last event delivered (or the
	// first offset, if none was): FromOffset(ResumeOffset) misses nothing
	// retention still holds.
	ResumeOffset int64
	Err          error
}

func (e *SubscriptionEndedError) Error() string {
	return fmt.Sprintf("felix/client: subscription to %s shard %d ended (resume at %d): %v", e.Stream, e.Shard, e.ResumeOffset, e.Err)
}

// Unwrap returns the cause.
func (e *SubscriptionEndedError) Unwrap() error { return e.Err }

// Subscribe reads one shard of a stream from opts.Start. Reading a whole
// multi-shard stream takes one subscription per shard; offsets are per
// shard. Each subscription has a connection of its own (dialed here, with
// the client's options, and closed by Close); if it drops, the
// subscription ends with ErrConnectionLost and a ResumeOffset to subscribe
// again from.
func (c *Client) Subscribe(ctx context.Context, stream Stream, shard int, opts SubscribeOptions) (*Subscription, error) {
	if shard < 0 || shard > math.MaxUint32 {
		return nil, &ServerError{Code: codeInvalidArgument, Name: codeInvalidArgument.String(), Message: "shard out of range", Local: true}
	}
	if err := c.open(); err != nil {
		return nil, err
	}
	cn, err := dialConn(ctx, c.addr, &c.opts, &c.ids)
	if err != nil {
		return nil, err
	}
	s := newSubscription(c, stream, shard, opts)
	if err := c.track(s); err != nil {
		cn.die(err)
		return nil, err
	}
	err = s.start(ctx, cn, opts)
	if err == nil {
		err = c.open() // a Close that raced the subscribe ends it too
	}
	if err != nil {
		_ = s.Close()
		cn.die(ErrClosed)
		return nil, err
	}
	return s, nil
}

func newSubscription(c *Client, stream Stream, shard int, opts SubscribeOptions) *Subscription {
	buffer := opts.Buffer
	if buffer <= 0 {
		buffer = DefaultSubscribeBuffer
	}
	return &Subscription{client: c, stream: stream, shard: shard, endAt: -1,
		notify: make(chan struct{}, 1), ring: make([]event, buffer)}
}

// start sends SUBSCRIBE on cn and waits for SUBSCRIBED, which attaches the
// subscription to cn before any event is read.
func (s *Subscription) start(ctx context.Context, cn *conn, opts SubscribeOptions) error {
	ref := s.stream.ref()
	if err := cn.limits.CheckStreamRef(ref); err != nil {
		return localError(err)
	}
	cl := newCall(false)
	cl.sub = s
	m := &wire.Subscribe{Stream: ref, Shard: uint32(s.shard),
		Start:         wire.Start{From: opts.Start.wireFrom(), Offset: uint64(opts.Start.offset), Time: opts.Start.time},
		QueueCapacity: opts.QueueCapacity, Overflow: opts.Overflow.wire()}
	opts.Until.wire(m)
	if need := m.RequiredFeatures(); !cn.features.Has(need) {
		return notNegotiated(need &^ cn.features)
	}
	if err := cn.control(ctx, m, cl); err != nil {
		return err
	}
	if cl.ftype != wire.TypeSubscribed {
		return fmt.Errorf("%w: %v in answer to SUBSCRIBE", ErrProtocol, cl.ftype)
	}
	return nil
}

func (st Start) wireFrom() wire.StartFrom {
	if st.from == "" {
		return wire.StartLatest
	}
	return st.from
}

// Stream is the stream read.
func (s *Subscription) Stream() Stream { return s.stream }

// Shard is the shard read.
func (s *Subscription) Shard() int { return s.shard }

// FirstOffset is the offset delivery started at.
func (s *Subscription) FirstOffset() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.first
}

// EndOffset is the offset a subscription with an Until stops before, as
// the broker fixed it; ok is false without an Until.
func (s *Subscription) EndOffset() (end int64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endAt, s.endAt >= 0
}

// Next waits for the next event, within ctx. Once the subscription has
// ended it returns a *SubscriptionEndedError (after every event already
// received), or ErrClosed after Close.
func (s *Subscription) Next(ctx context.Context) (Event, error) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return Event{}, ErrClosed
		}
		if s.n > 0 && s.ring[s.head].offset < 0 {
			s.passControl()
		}
		if s.n > 0 {
			ev := s.pop()
			s.mu.Unlock()
			return ev, nil
		}
		if s.end != nil {
			e := s.end
			e.ResumeOffset = s.next
			s.mu.Unlock()
			return Event{}, e
		}
		s.mu.Unlock()
		select {
		case <-s.notify:
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// Events iterates the subscription's events:
//
//	for ev, err := range sub.Events(ctx) {
//		if err != nil {
//			// the subscription ended, or ctx did
//		}
//	}
//
// The last pair carries the error that ended the iteration (the
// subscription's end, ErrClosed, or ctx's error); breaking out of the loop
// leaves the subscription open.
func (s *Subscription) Events(ctx context.Context) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		for {
			ev, err := s.Next(ctx)
			if err != nil {
				yield(Event{}, err)
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// pop takes the oldest queued event, which passControl left a record;
// mu held, n > 0.
func (s *Subscription) pop() Event {
	q := &s.ring[s.head]
	ev := Event{Shard: s.shard, Offset: q.offset, Timestamp: time.Unix(0, q.ts), Key: q.key, Value: q.value}
	s.take()
	if ev.Offset > s.next {
		ev.Missed = uint64(ev.Offset - s.next)
	}
	if s.missed != 0 { // a drop just before a control offset
		ev.Missed, s.missed = ev.Missed+s.missed, 0
	}
	s.next = ev.Offset + 1
	s.delivered++
	return ev
}

// passControl takes the offsets at the head of the ring that hold no
// record: the next offset moves past them, and what was missed before
// them is counted on the next event; mu held.
func (s *Subscription) passControl() {
	for s.n > 0 && s.ring[s.head].offset < 0 {
		off := ^s.ring[s.head].offset
		s.take()
		s.missed += s.gapTo(off)
		s.next = off + 1
	}
}

// gapTo is the number of offsets between the next one due and off.
func (s *Subscription) gapTo(off int64) uint64 {
	if off > s.next {
		return uint64(off - s.next)
	}
	return 0
}

// take removes the head of the ring, and wakes a push waiting for room;
// mu held, n > 0.
func (s *Subscription) take() {
	s.ring[s.head] = event{}
	s.head = (s.head + 1) % len(s.ring)
	s.n--
	if s.room != nil {
		close(s.room)
		s.room = nil
	}
}

// SubscriptionStats are a subscription's client-side counters. Drops,
// which happen at the broker, show as gaps (Event.Missed).
type SubscriptionStats struct {
	Delivered uint64 // events handed to the reader
	Queued    int    // events received and waiting for the reader (offsets that hold no record included)
}

// Stats returns the client-side counters.
func (s *Subscription) Stats() SubscriptionStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return SubscriptionStats{Delivered: s.delivered, Queued: s.n}
}

// Close ends the subscription: its connection is closed (which ends the
// subscription at the broker), queued events are discarded, and Next
// returns ErrClosed. Closing twice is harmless.
func (s *Subscription) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	clear(s.ring)
	s.n = 0
	if s.room != nil {
		close(s.room)
		s.room = nil
	}
	cn := s.conn
	s.mu.Unlock()
	s.wake()
	s.client.untrack(s)
	if cn != nil {
		cn.die(ErrClosed)
	}
	return nil
}

func (s *Subscription) wake() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}
