package netio

import (
	"context"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio/wire"
)

// queueRecordsMax bounds the queue_capacity a SUBSCRIBE may ask for (the
// engine's byte bound applies as well).
const queueRecordsMax = 1 << 20

// subscribe handles SUBSCRIBE: register on the shard (redirecting with
// not_leader when another broker leads it), answer SUBSCRIBED, then start
// the subscription's deliverer. A start by time looks the time up in the
// shard's log, which reads the disk, so that subscribe registers on a
// goroutine of its own; every other registers on the loop. Loop only.
func (c *conn) subscribe(f wire.Frame) {
	var m wire.Subscribe
	if err := wire.DecodeControl(f, c.s.cfg.Limits, &m); err != nil {
		c.answer(f.RequestID, toWire(err))
		return
	}
	features := wire.Features(c.features.Load())
	if need := m.RequiredFeatures(); !features.Has(need) {
		c.answer(f.RequestID, &wire.Error{Code: wire.CodeFeatureNotNegotiated,
			Message: "a start by time or an end needs subscribe_bounds", Details: wire.Details{Feature: need &^ features}})
		return
	}
	sh, err := c.shardToSubscribe(&m)
	if err != nil {
		c.answer(f.RequestID, toWire(err))
		return
	}
	if !c.s.admit() {
		c.answer(f.RequestID, errShuttingDown)
		return
	}
	c.lastSubID++
	id, opts := c.lastSubID, subscribeOptions(&m, features)
	if opts.Start == engine.StartTime {
		go c.register(f.RequestID, id, m.Shard, sh, opts)
		return
	}
	c.register(f.RequestID, id, m.Shard, sh, opts)
}

// register subscribes on the shard under the unit of work subscribe took,
// answers, and starts the deliverer; on the loop or a goroutine of its
// own.
func (c *conn) register(requestID, id uint64, shard uint32, sh *engine.Shard, opts engine.SubscribeOptions) {
	sub, err := sh.Subscribe(opts)
	if err != nil {
		c.s.work.done()
		c.sendError(requestID, toWire(err))
		return
	}
	d := newDeliverer(c, id, shard, sub)
	ok := &wire.Subscribed{SubscriptionID: d.id, FirstOffset: uint64(sub.First())}
	if end, until := sub.EndOffset(); until {
		ok.EndOffset = wire.U64(uint64(end))
	}
	// Known before SUBSCRIBED names it, so an UNSUBSCRIBE that follows
	// finds it even when this runs off the loop; no event goes out before
	// the answer, as the deliverer starts after it.
	c.addSub(d)
	c.sendControl(requestID, ok)
	c.s.cfg.Metrics.SubscriptionsActive.Add(1)
	go d.run()
}

func (c *conn) shardToSubscribe(m *wire.Subscribe) (*engine.Shard, error) {
	st, id, err := c.stream(m.Stream, ActionSubscribe)
	if err != nil {
		return nil, err
	}
	sh, err := st.Shard(int(m.Shard))
	if err != nil {
		return nil, err
	}
	if local, leader := c.s.cfg.Owner.Leader(id, sh.Index()); !local {
		return nil, &engine.NotLeaderError{Stream: id, Shard: sh.Index(), Leader: leader}
	}
	return sh, nil
}

// subscribeOptions are the engine's options for m on a session with
// features: with control_events the subscription is handed the shard's
// control records, which the deliverer pushes as EventFlagControl events.
func subscribeOptions(m *wire.Subscribe, features wire.Features) engine.SubscribeOptions {
	o := engine.SubscribeOptions{QueueRecords: int(min(m.QueueCapacity, queueRecordsMax)),
		Control: features.Has(wire.FeatureControlEvents)}
	switch m.Start.From {
	case wire.StartEarliest:
		o.Start = engine.StartEarliest
	case wire.StartOffset:
		o.Start, o.Offset = engine.StartOffset, int64(min(m.Start.Offset, 1<<63-1))
	case wire.StartTime:
		o.Start, o.Time = engine.StartTime, m.Start.Time
	default:
		o.Start = engine.StartLatest
	}
	if m.UntilEnd {
		o.UntilEnd, o.End = true, -1
		if m.UntilOffset != nil {
			o.End = int64(min(*m.UntilOffset, 1<<63-1))
		}
	}
	switch m.Overflow {
	case wire.OverflowDropOld:
		o.Overflow = engine.DropOld
	case wire.OverflowDisconnect:
		o.Overflow = engine.Disconnect
	default:
		o.Overflow = engine.DropNew
	}
	return o
}

// addSub records a new deliverer, or ends it at once when the connection's
// subscriptions are already ending (Stop raced with the SUBSCRIBE).
func (c *conn) addSub(d *deliverer) {
	c.subMu.Lock()
	defer c.subMu.Unlock()
	if c.ending != nil {
		d.cancel(c.ending)
	}
	c.subs[d.id] = d
}

// unsubscribe handles UNSUBSCRIBE. The deliverer answers OK as it exits, so
// no event of the subscription follows the OK. Loop only.
func (c *conn) unsubscribe(f wire.Frame) {
	var m wire.Unsubscribe
	if err := wire.DecodeControl(f, c.s.cfg.Limits, &m); err != nil {
		c.answer(f.RequestID, toWire(err))
		return
	}
	c.subMu.Lock()
	d, ok := c.subs[m.SubscriptionID]
	ok = ok && !d.unsubscribing
	if ok {
		d.unsubscribing, d.unsubscribeID = true, f.RequestID
		d.cancel(errUnsubscribe)
	}
	c.subMu.Unlock()
	if !ok {
		c.answer(f.RequestID, &wire.Error{Code: wire.CodeNotFound, Message: "no such subscription on this connection"})
	}
}

// endSubscriptions ends every subscription of the connection: with
// SUBSCRIPTION_ENDED for a reason the client should hear (shutting_down),
// silently when the connection is gone.
func (c *conn) endSubscriptions(reason error) {
	c.subMu.Lock()
	defer c.subMu.Unlock()
	if c.ending == nil {
		c.ending = reason
	}
	for _, d := range c.subs {
		d.cancel(reason)
	}
}

// removeSub forgets a deliverer as it exits and reports the UNSUBSCRIBE it
// must answer, if any.
func (c *conn) removeSub(d *deliverer) (unsubscribeID uint64, unsubscribed bool) {
	c.subMu.Lock()
	defer c.subMu.Unlock()
	delete(c.subs, d.id)
	return d.unsubscribeID, d.unsubscribing
}

// deliverer carries one subscription's records to its connection: one
// goroutine per subscription, pulling from engine.Subscription.Next only
// while the connection's outbound budget has room. A subscriber that does
// not read leaves its engine queue to fill, and the engine drops from it
// per its overflow policy: the broker's memory stays bounded and no
// publisher waits.
type deliverer struct {
	c      *conn
	id     uint64
	shard  uint32
	sub    *engine.Subscription
	ctx    context.Context
	cancel context.CancelCauseFunc
	buf    []byte
	drops  uint64 // drops already counted in Metrics

	// guarded by c.subMu
	unsubscribing bool
	unsubscribeID uint64
}

func newDeliverer(c *conn, id uint64, shard uint32, sub *engine.Subscription) *deliverer {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &deliverer{c: c, id: id, shard: shard, sub: sub, ctx: ctx, cancel: cancel}
}
