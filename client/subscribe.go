package client

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"sync"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// Start is where a subscription starts reading; the zero Start is latest.
type Start struct {
	from   wire.StartFrom
	offset uint64
}

// FromLatest starts at the records published after the subscription is
// registered.
func FromLatest() Start { return Start{from: wire.StartLatest} }

// FromEarliest starts at the oldest record retention still holds.
func FromEarliest() Start { return Start{from: wire.StartEarliest} }

// FromOffset starts at offset, which must lie between the oldest offset
// retention holds (ErrOffsetBelowRetention otherwise) and the next offset
// to be written (ErrOffsetPastTail otherwise). Resuming after the last
// event handled is FromOffset(ev.Offset+1): stored history joins live
// delivery with no gap and no duplicate.
func FromOffset(offset uint64) Start { return Start{from: wire.StartOffset, offset: offset} }

// Overflow is what the subscription's full queue at the broker does with
// the next record. It is the only place a subscription loses records: the
// client never drops one.
type Overflow uint8

const (
	// DropNew drops the incoming record (the default).
	DropNew Overflow = iota
	// DropOld drops the oldest queued record.
	DropOld
	// Disconnect ends the subscription with ErrSubscriberLagged, naming the
	// first missed offset.
	Disconnect
)

func (o Overflow) wire() wire.Overflow {
	switch o {
	case DropOld:
		return wire.OverflowDropOld
	case Disconnect:
		return wire.OverflowDisconnect
	}
	return wire.OverflowDropNew
}

// DefaultSubscribeBuffer is a subscription's read-ahead in the client, in
// events, when SubscribeOptions.Buffer is zero.
const DefaultSubscribeBuffer = 1024

// SubscribeOptions configure a subscription; the zero value reads live
// records from now on with the broker's default queue and DropNew.
type SubscribeOptions struct {
	Start Start
	// QueueCapacity bounds the subscription's queue at the broker, in
	// records; 0 is the broker's default.
	QueueCapacity uint32
	Overflow      Overflow
	// Buffer bounds the events received but not yet taken by Next; 0 is
	// DefaultSubscribeBuffer. When it is full the subscription's connection
	// stops reading, so the broker's queue fills and Overflow applies
	// there; a replay of history is simply paced.
	Buffer int
}

// Event is one record delivered to a subscriber. Its slices are its own:
// the client never reuses them.
type Event struct {
	Shard     uint32
	Offset    uint64
	Timestamp time.Time
	Key       []byte
	Value     []byte
	// Missed is the number of offsets skipped just before this event:
	// records this subscriber did not get. Offsets are dense in a shard, so
	// a gap is exactly a drop (by the overflow policy of the subscription's
	// queue at the broker); Missed is how an application sees one.
	Missed uint64
}

// event is an Event as queued: 64 bytes, not 104.
type event struct {
	offset uint64
	ts     int64
	key    []byte
	value  []byte
}

// Subscription reads one shard of a stream over a connection of its own,
// so that a slow reader holds back only itself: when its buffer is full the
// connection stops reading, and the broker's queue and overflow policy
// decide, never blocking the broker's publishers nor this client's other
// requests. Next and Events are for one reader at a time; Close, Stats and
// the accessors are safe from any goroutine.
type Subscription struct {
	client *Client
	stream Stream
	shard  uint32
	notify chan struct{} // capacity 1: an event or the end arrived

	// mu guards the fields below. Lock order: mu, then conn.mu.
	mu        sync.Mutex
	conn      *conn // the subscription's own connection
	id        uint64
	attached  bool   // registered on conn under id
	first     uint64 // SUBSCRIBED's first offset
	next      uint64 // the offset the reader is due next
	ring      []event
	head, n   int
	room      chan struct{}           // closed when the reader takes an event from a full ring; nil if nobody waits
	end       *SubscriptionEndedError // why it ended; given once the queue is drained
	closed    bool                    // Close was called
	delivered uint64
}

// SubscriptionEndedError says why a subscription ended and where to resume.
// errors.Is matches its cause: ErrSubscriberLagged, ErrNotFound (the stream
// was deleted), ErrShuttingDown, ErrNotLeader (the shard moved),
// ErrConnectionLost, ErrClosed.
type SubscriptionEndedError struct {
	Stream Stream
	Shard  uint32
	// Code is the broker's code; 0 for a lost connection or a close.
	Code wire.Code
	// FirstMissedOffset is the first record the subscriber lost, when the
	// subscription ended because it fell behind.
	FirstMissedOffset *uint64
	// ResumeOffset is the offset after the last event delivered (or the
	// first offset, if none was): FromOffset(ResumeOffset) misses nothing
	// retention still holds.
	ResumeOffset uint64
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
		return nil, &ServerError{Code: wire.CodeInvalidArgument, Name: wire.CodeInvalidArgument.String(), Message: "shard out of range", Local: true}
	}
	if err := c.open(); err != nil {
		return nil, err
	}
	cn, err := dialConn(ctx, c.addr, &c.opts, &c.ids)
	if err != nil {
		return nil, err
	}
	s := newSubscription(c, stream, uint32(shard), opts)
	if err := c.track(s); err != nil {
		cn.die(err)
		return nil, err
	}
	if err := s.start(ctx, cn, opts); err != nil {
		_ = s.Close()
		cn.die(ErrClosed)
		return nil, err
	}
	return s, nil
}

func newSubscription(c *Client, stream Stream, shard uint32, opts SubscribeOptions) *Subscription {
	buffer := opts.Buffer
	if buffer <= 0 {
		buffer = DefaultSubscribeBuffer
	}
	return &Subscription{client: c, stream: stream, shard: shard,
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
	m := &wire.Subscribe{Stream: ref, Shard: s.shard,
		Start:         wire.Start{From: opts.Start.wireFrom(), Offset: opts.Start.offset},
		QueueCapacity: opts.QueueCapacity, Overflow: opts.Overflow.wire()}
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
func (s *Subscription) Shard() uint32 { return s.shard }

// FirstOffset is the offset delivery started at.
func (s *Subscription) FirstOffset() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.first
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

// pop takes the oldest queued event; mu held, n > 0.
func (s *Subscription) pop() Event {
	q := &s.ring[s.head]
	ev := Event{Shard: s.shard, Offset: q.offset, Timestamp: time.Unix(0, q.ts), Key: q.key, Value: q.value}
	*q = event{}
	s.head = (s.head + 1) % len(s.ring)
	s.n--
	if ev.Offset > s.next {
		ev.Missed = ev.Offset - s.next
	}
	s.next = ev.Offset + 1
	s.delivered++
	if s.room != nil {
		close(s.room)
		s.room = nil
	}
	return ev
}

// SubscriptionStats are a subscription's client-side counters. Drops,
// which happen at the broker, show as gaps (Event.Missed).
type SubscriptionStats struct {
	Delivered uint64 // events handed to the reader
	Queued    int    // events received and waiting for the reader
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

// attach registers the subscription under the broker's id; on the reader
// goroutine, before the next frame is read.
func (s *Subscription) attach(c *conn, m wire.Subscribed) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return // the subscriber gave up waiting; its connection is closing
	}
	s.conn, s.id, s.attached = c, m.SubscriptionID, true
	s.first, s.next = m.FirstOffset, m.FirstOffset
	c.mu.Lock()
	dead := c.err
	if dead == nil {
		c.subs[m.SubscriptionID] = s
	}
	c.mu.Unlock()
	if dead != nil {
		s.endLocked(&SubscriptionEndedError{Err: dead})
	}
	s.mu.Unlock()
}

// endLocked records why the subscription ended, once; mu held.
func (s *Subscription) endLocked(e *SubscriptionEndedError) {
	if s.end != nil || s.closed {
		return
	}
	e.Stream, e.Shard = s.stream, s.shard
	s.end = e
	s.wake()
}

// lost ends the subscription because its connection died (a no-op if it
// had ended already), and drops it from the client's set.
func (s *Subscription) lost(err error) {
	s.mu.Lock()
	s.endLocked(&SubscriptionEndedError{Err: err})
	s.mu.Unlock()
	s.client.untrack(s)
}

// push queues the events of one batch, whose bytes the subscription now
// owns; on its connection's reader goroutine. While the ring is full it
// waits for the reader to take an event, so the connection stops reading
// and the broker's queue absorbs the difference. It gives up when the
// subscription is closed or its connection dies.
func (s *Subscription) push(c *conn, b *wire.EventBatch) {
	it := b.Events()
	more := it.Next()
	for more {
		s.mu.Lock()
		if s.end != nil || s.closed {
			s.mu.Unlock()
			return
		}
		added := false
		for more && s.n < len(s.ring) {
			ev := it.Event()
			s.ring[(s.head+s.n)%len(s.ring)] = event{offset: ev.Offset, ts: ev.Timestamp, key: ev.Key, value: ev.Value}
			s.n++
			added = true
			more = it.Next()
		}
		var room chan struct{}
		if more {
			if s.room == nil {
				s.room = make(chan struct{})
			}
			room = s.room
		}
		s.mu.Unlock()
		if added {
			s.wake()
		}
		if room != nil && !c.waitForReader(room) {
			return
		}
	}
}

// onSubscribed registers the subscription a SUBSCRIBE asked for, before the
// events that follow it are read.
func (c *conn) onSubscribed(f wire.Frame) error {
	cl := c.take(f.RequestID)
	if cl == nil {
		return nil
	}
	var m wire.Subscribed
	if err := wire.DecodeControl(f, c.readLimits, &m); err != nil {
		err = fmt.Errorf("%w: SUBSCRIBED: %w", ErrProtocol, err)
		c.finish(cl, err)
		return err
	}
	if cl.sub != nil {
		cl.sub.attach(c, m)
	}
	cl.ftype = f.Type
	c.finish(cl, nil)
	return nil
}

// onEventBatch hands a batch to its subscription. The body is copied once,
// and the events alias the copy: one allocation per batch, not per event.
func (c *conn) onEventBatch(f wire.Frame) error {
	f.Body = append([]byte(nil), f.Body...)
	var b wire.EventBatch
	if err := b.Decode(f, c.readLimits); err != nil {
		return fmt.Errorf("%w: EVENT_BATCH: %w", ErrProtocol, err)
	}
	c.mu.Lock()
	s := c.subs[b.SubscriptionID]
	c.mu.Unlock()
	if s != nil {
		s.push(c, &b)
	}
	return nil
}

func (c *conn) onSubscriptionEnded(f wire.Frame) error {
	var m wire.SubscriptionEnded
	if err := wire.DecodeControl(f, c.readLimits, &m); err != nil {
		return fmt.Errorf("%w: SUBSCRIPTION_ENDED: %w", ErrProtocol, err)
	}
	c.mu.Lock()
	s := c.subs[m.SubscriptionID]
	c.mu.Unlock()
	if s == nil {
		return nil
	}
	se := &ServerError{Code: m.Code, Name: m.Code.String(), Message: m.Message,
		Details: wire.Details{FirstMissedOffset: m.FirstMissedOffset}}
	s.mu.Lock()
	s.endLocked(&SubscriptionEndedError{Code: m.Code, FirstMissedOffset: m.FirstMissedOffset, Err: se})
	s.mu.Unlock()
	return errSubscriptionOver // the connection was the subscription's; close it
}

// errSubscriptionOver closes a subscription's connection once the broker
// has ended the subscription.
var errSubscriptionOver = errors.New("felix/client: the subscription ended")
