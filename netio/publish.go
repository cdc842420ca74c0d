package netio

import (
	"sync"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio/wire"
)

// eventFrameOverheadMax is the most an EVENT_BATCH carrying one record adds
// to its key and value: the 16-byte header, subscription id, shard, base
// offset and count (24), and the event's own fields (a 1-byte delta, the
// timestamp and flags, and two length varints of at most 3 and 5 bytes).
// A publish whose record would not fit one EVENT_BATCH is refused, so every
// record can be delivered.
const eventFrameOverheadMax = wire.HeaderSize + 24 + 1 + 8 + 2 + 3 + 5

// publish handles PUBLISH, PUBLISH_BATCH and PUBLISH_JSON alike: decode in
// place, copy the records into the engine (Stream.Publish copies them into
// the shard's write buffer before it returns, so the frame can be
// discarded), and answer when the engine says the records are durable as
// the stream requires. The shards' committers are woken once per socket
// read, when traffic has handled every frame of it (c.wakes). The parts
// for shards another broker leads go to the engine's Forwarder with the
// connection's credential (Stream.PublishFrom), and are acknowledged in
// the same PUBLISH_ACK when their leaders answer; a relayed publish (one
// another broker forwarded here) is never forwarded again. Loop only.
func (c *conn) publish(f wire.Frame) {
	p := &c.pub
	if err := p.Decode(f, c.s.cfg.Limits); err != nil {
		c.publishFailed(f.RequestID, toWire(err))
		return
	}
	c.countFrame(f.Type, p)
	if err := c.checkPublish(f.RequestID, p); err != nil {
		c.publishFailed(f.RequestID, err)
		return
	}
	st, _, err := c.stream(p.Stream, ActionPublish)
	if err != nil {
		c.publishFailed(f.RequestID, toWire(err))
		return
	}
	recs, err := c.records(p)
	if err != nil {
		c.publishFailed(f.RequestID, toWire(err))
		return
	}
	if c.relayed {
		if err := leadsEvery(c.s.cfg.Engine.Owner(), st, recs); err != nil {
			c.publishFailed(f.RequestID, toWire(err))
			return
		}
	}
	if e := c.admitPublish(st.ID().Tenant, recs); e != nil {
		c.publishFailed(f.RequestID, e)
		return
	}
	if !c.s.admit() {
		c.publishFailed(f.RequestID, errShuttingDown)
		return
	}
	if p.Idempotent {
		c.publishIdempotent(f.RequestID, st, p, recs) // producer.go
		return
	}
	w := ackWaiters.Get().(*ackWaiter)
	w.c, w.requestID, w.ack = c, f.RequestID, p.Ack
	if c.s.cfg.Metrics.ObserveAck != nil {
		w.began = time.Now()
	}
	if err := st.PublishFrom(recs, w, &c.wakes, c.credential()); err != nil {
		w.release()
		c.publishFailed(f.RequestID, toWire(err))
	}
}

func (c *conn) countFrame(t wire.Type, p *wire.Publish) {
	m := c.s.cfg.Metrics
	if t == wire.TypePublishJSON {
		c.jsonPubs.Add(1)
		m.PublishJSON.Add(1)
		return
	}
	c.binaryPubs.Add(1)
	if p.Keyed {
		m.PublishKeyedBinary.Add(1)
	}
}

// checkPublish refuses what the decoder cannot: an idempotent JSON batch on
// a session without idempotent producers, and an ack awaited on request id
// 0.
func (c *conn) checkPublish(requestID uint64, p *wire.Publish) *wire.Error {
	if p.Idempotent && !wire.Features(c.features.Load()).Has(wire.FeatureIdempotentProducers) {
		return &wire.Error{Code: wire.CodeFeatureNotNegotiated, Message: "an idempotent batch needs idempotent_producers",
			Details: wire.Details{Feature: wire.FeatureIdempotentProducers}}
	}
	if requestID == 0 && p.Ack != wire.AckNone {
		return &wire.Error{Code: wire.CodeInvalidArgument, Message: "request id 0 is for publishes with ack none",
			Details: wire.Details{Field: "request_id"}}
	}
	return nil
}

// records lists the publish's records for the engine, aliasing the frame.
func (c *conn) records(p *wire.Publish) ([]engine.Record, error) {
	bodyMax := c.s.cfg.Limits.FrameBytesMax - eventFrameOverheadMax
	recs := c.recs[:0]
	for it := p.Records(); it.Next(); {
		r := it.Record()
		if len(r.Key)+len(r.Value) > bodyMax {
			return nil, &wire.Error{Code: wire.CodeLimitExceeded,
				Message: "a record must fit in one EVENT_BATCH frame to be deliverable",
				Details: wire.Details{Limit: wire.LimitFrameBytes, LimitValue: uint64(c.s.cfg.Limits.FrameBytesMax)}}
		}
		recs = append(recs, engine.Record{Key: r.Key, Value: r.Value, Timestamp: r.Timestamp})
	}
	c.recs = recs
	return recs, nil
}

func (c *conn) publishFailed(requestID uint64, e *wire.Error) {
	c.s.cfg.Metrics.countPublish(e.Code)
	c.answer(requestID, e)
}

// admit counts a unit of work Stop must wait for, unless Stop has begun.
// The count comes first, so Stop either sees it or is seen.
func (s *Server) admit() bool {
	s.work.add()
	if s.stopping.Load() {
		s.work.done()
		return false
	}
	return true
}

// ackWaiter answers one publish when the engine acknowledges it. Pooled:
// a publish in steady state allocates nothing.
type ackWaiter struct {
	c         *conn
	requestID uint64
	ack       wire.AckMode
	runs      []wire.AckRun
	began     time.Time // zero unless Metrics.ObserveAck is set
}

var ackWaiters = sync.Pool{New: func() any { return new(ackWaiter) }}

// Published runs on the shard log's committer (or, for a stream kept in
// memory, inside Stream.Publish on the loop). It only encodes into the
// connection's outbox, which never blocks.
func (w *ackWaiter) Published(runs []engine.AckRun, err error) {
	if err != nil {
		e := toWire(err)
		w.c.s.cfg.Metrics.countPublish(e.Code)
		w.c.sendError(w.requestID, e)
	} else {
		w.acknowledge(nil, runs)
	}
	w.release()
}

// PublishedIn is Published from the committer of the flush (b) that made
// the publish durable: the ack waits in the outbox for the flush's end,
// when the committer writes the flush's acks to the connection at once.
func (w *ackWaiter) PublishedIn(b *engine.AckBatch, runs []engine.AckRun) {
	w.acknowledge(b, runs)
	w.release()
}

func (w *ackWaiter) acknowledge(b *engine.AckBatch, runs []engine.AckRun) {
	m := w.c.s.cfg.Metrics
	m.countPublish(0)
	w.sendAck(b, runs)
	if !w.began.IsZero() {
		m.ObserveAck(time.Since(w.began))
	}
}

// sendAck sends PUBLISH_ACK: one with every run (per batch), or one per run
// (per message: the engine reports a publish once, when every shard's part
// is durable, so the runs go out together); nothing for ack none. With b,
// the outbox's write waits for the end of b's flush.
func (w *ackWaiter) sendAck(b *engine.AckBatch, runs []engine.AckRun) {
	w.runs = w.runs[:0]
	var n uint64
	for _, r := range runs {
		w.runs = append(w.runs, wire.AckRun{Shard: uint32(r.Shard), FirstOffset: uint64(r.First), Count: uint32(r.Count)})
		n += uint64(r.Count)
	}
	w.c.s.cfg.Metrics.PublishRecords.Add(n)
	if w.ack == wire.AckNone {
		return
	}
	o := w.c.out
	buf := o.begin()
	if w.ack == wire.AckPerBatch {
		buf = wire.AppendPublishAck(buf, w.requestID, w.runs...)
	} else {
		for _, r := range w.runs {
			buf = wire.AppendPublishAck(buf, w.requestID, r)
		}
	}
	if b != nil {
		o.commitIn(buf, b)
		return
	}
	o.commitDirect(buf) // off the loop only for a forwarded part, last to be acknowledged
}

// release ends the publish's unit of work and pools the waiter.
func (w *ackWaiter) release() {
	s := w.c.s
	w.c, w.began = nil, time.Time{}
	ackWaiters.Put(w)
	s.work.done()
}
