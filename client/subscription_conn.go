package client

import (
	"errors"
	"fmt"

	"github.com/felixbroker/felix/netio/wire"
)

// attach registers the subscription under the broker's id; on the reader
// goroutine, before the next frame is read.
func (s *Subscription) attach(c *conn, m wire.Subscribed) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return // the subscriber gave up waiting; its connection is closing
	}
	s.conn, s.id, s.attached = c, m.SubscriptionID, true
	s.first, s.next = int64(m.FirstOffset), int64(m.FirstOffset)
	if m.EndOffset != nil {
		s.endAt = int64(min(*m.EndOffset, 1<<63-1))
	}
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
			q := event{offset: int64(ev.Offset), ts: ev.Timestamp, key: ev.Key, value: ev.Value}
			if ev.Flags&wire.EventFlagControl != 0 {
				q = event{offset: ^int64(ev.Offset)} // holds no record
			}
			s.ring[(s.head+s.n)%len(s.ring)] = q
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
	missed := offsetPtr(m.FirstMissedOffset)
	se := &ServerError{Code: Code(m.Code), Name: m.Code.String(), Message: m.Message,
		Details: Details{FirstMissedOffset: missed}}
	s.mu.Lock()
	s.endLocked(&SubscriptionEndedError{Code: Code(m.Code), FirstMissedOffset: missed, Err: se})
	s.mu.Unlock()
	return errSubscriptionOver // the connection was the subscription's; close it
}

// errSubscriptionOver closes a subscription's connection once the broker
// has ended the subscription.
var errSubscriptionOver = errors.New("felix/client: the subscription ended")

// onSubscriptionAtEnd ends a subscription whose Until's end is reached:
// after the events before it, Next returns ErrEndReached.
func (c *conn) onSubscriptionAtEnd(f wire.Frame) error {
	var m wire.SubscriptionAtEnd
	if err := wire.DecodeControl(f, c.readLimits, &m); err != nil {
		return fmt.Errorf("%w: SUBSCRIPTION_AT_END: %w", ErrProtocol, err)
	}
	c.mu.Lock()
	s := c.subs[m.SubscriptionID]
	c.mu.Unlock()
	if s == nil {
		return nil
	}
	s.mu.Lock()
	s.endLocked(&SubscriptionEndedError{Err: ErrEndReached})
	s.mu.Unlock()
	return errSubscriptionOver // the connection was the subscription's; close it
}

// ErrEndReached ends a subscription with an Until once every record
// before its end has been delivered (or dropped: a gap). It is no failure:
// the subscription did what it was asked.
var ErrEndReached = errors.New("felix/client: the subscription reached its end")
