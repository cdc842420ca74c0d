package netio

import (
	"context"
	"errors"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment"
)

// deliverPullBytesMax bounds the records one Next pulls: it bounds how far a
// connection's outbound budget can be overshot per deliverer, and how long
// the outbox lock is held while they are encoded.
const deliverPullBytesMax = 256 << 10

// deliverKeepBytes is the largest pull buffer a deliverer keeps between
// pulls.
const deliverKeepBytes = 1 << 20

// run is the deliverer's goroutine: wait for budget, pull, encode as
// EVENT_BATCH frames into the outbox; until the subscription ends.
func (d *deliverer) run() {
	defer d.finish()
	frameMax := d.c.s.cfg.Limits.FrameBytesMax
	for {
		room, err := d.c.out.waitRoom(d.ctx)
		if err != nil {
			d.end(err)
			return
		}
		// Events are smaller than the framed records they come from, so a
		// pull that fits a frame (less its header) encodes into one.
		pull := min(room, deliverPullBytesMax, frameMax-eventFrameOverheadMax)
		recs, err := d.sub.Next(d.ctx, d.buf[:0], pull)
		if len(recs) > 0 {
			if encErr := d.send(recs); encErr != nil {
				d.end(encErr)
				return
			}
		}
		if cap(recs) <= deliverKeepBytes {
			d.buf = recs[:0]
		}
		d.countDrops()
		if err != nil {
			d.end(err)
			return
		}
	}
}

// send encodes framed records as EVENT_BATCH frames straight into the
// outbox.
func (d *deliverer) send(recs []byte) error {
	o := d.c.out
	b := o.begin()
	b, err := appendEvents(b, d.id, d.shard, recs, d.c.s.cfg.Limits)
	o.commit(b)
	return err
}

// appendEvents appends the records (segment framing, as the engine returns
// them) as EVENT_BATCH frames, starting a new frame when one would exceed
// the frame size or the batch count. A control record (the engine hands
// them only to a session with control_events) goes as an event with its
// flags, EventFlagControl among them, and no key or value. A record that
// does not verify stops the walk with an error; the records before it are
// appended.
func appendEvents(dst []byte, subID uint64, shard uint32, recs []byte, lim wire.Limits) ([]byte, error) {
	var w wire.EventBatchWriter
	open := false
	it := segment.NewIter(recs)
	for r, ok := it.Next(); ok; r, ok = it.Next() {
		size := eventFrameOverheadMax + len(r.Key) + len(r.Value)
		if open && (w.Len() >= lim.BatchRecordsMax || w.Size()+size > lim.FrameBytesMax) {
			dst, open = w.Finish(), false
		}
		if !open {
			w, open = wire.BeginEventBatch(dst, 0, subID, shard, uint64(r.Offset)), true
		}
		if r.Flags&segment.FlagControl != 0 {
			r.Key, r.Value = nil, nil
		}
		w.Add(wire.Event{Offset: uint64(r.Offset), Timestamp: r.Timestamp, Flags: r.Flags, Key: r.Key, Value: r.Value})
	}
	if open {
		dst = w.Finish()
	}
	return dst, it.Err()
}

func (d *deliverer) countDrops() {
	if st := d.sub.Stats(); st.Dropped > d.drops {
		d.c.s.cfg.Metrics.SubscriberDrops.Add(st.Dropped - d.drops)
		d.drops = st.Dropped
	}
}

// end says why the subscription ended, if the client should hear it:
// SUBSCRIPTION_AT_END once a subscription with until_end is at its end,
// SUBSCRIPTION_ENDED for the engine's reasons (lagged, stream deleted,
// engine closed) and for Stop; nothing for an UNSUBSCRIBE (its OK follows)
// or a closed connection.
func (d *deliverer) end(err error) {
	if d.ctx.Err() != nil {
		err = context.Cause(d.ctx)
	}
	if errors.Is(err, errUnsubscribe) || errors.Is(err, errConnClosed) {
		return
	}
	if errors.Is(err, engine.ErrEndReached) {
		end, _ := d.sub.EndOffset()
		d.c.sendControl(0, &wire.SubscriptionAtEnd{SubscriptionID: d.id, EndOffset: uint64(end)})
		return
	}
	e := toWire(err)
	if e.Code == wire.CodeInternal {
		d.c.s.cfg.Logger.Error("subscription failed", "subscription", d.id, "remote", d.c.remote, "err", err)
	}
	d.c.sendControl(0, &wire.SubscriptionEnded{SubscriptionID: d.id, Code: e.Code, Message: e.Message,
		FirstMissedOffset: e.Details.FirstMissedOffset})
}

// finish releases the subscription, answers a pending UNSUBSCRIBE, and
// ends the deliverer's unit of work.
func (d *deliverer) finish() {
	d.sub.Close()
	d.cancel(errConnClosed)
	if id, ok := d.c.removeSub(d); ok {
		d.c.sendOK(id)
	}
	d.c.s.cfg.Metrics.SubscriptionsActive.Add(-1)
	d.c.s.work.done()
}
