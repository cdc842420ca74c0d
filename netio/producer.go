package netio

import (
	"sync"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/producer"
	"github.com/felixbroker/felix/netio/wire"
)

func init() {
	frameHandlers[wire.TypeProducerInit] = (*conn).producerInit
	// PUBLISH_IDEMPOTENT takes the publish path (decode, permission,
	// quotas, admission), which hands idempotent batches, a PUBLISH_JSON
	// carrying a producer included, to publishIdempotent.
	frameHandlers[wire.TypePublishIdempotent] = (*conn).publish
	featureHooks = append(featureHooks, func(cfg *Config) wire.Features {
		if cfg.Producers == nil {
			return 0
		}
		return wire.FeatureIdempotentProducers
	})
}

// ActionProducerInit is PRODUCER_INIT's action on the stream; the action
// table grants it with publish (only a publisher needs a producer id).
// PUBLISH_IDEMPOTENT is ActionPublish, like every publish.
const ActionProducerInit Action = "producer.init"

// The wire carries a producer's epoch in 32 bits, the engine's in 64: the
// broker sends the low 32 bits of its epoch and takes a batch whose epoch
// matches them as its own. Two incarnations of a broker then share an
// epoch with a chance of one in 2^32 (the engine draws epochs at random).
func wireEpoch(m *producer.Manager) uint32 { return uint32(m.Epoch()) }

// producerInit handles PRODUCER_INIT: the shard must exist and be led
// here; the id is issued on a goroutine (issuing may sweep the idle
// producers, a walk over all of them) and answered from there. Loop only.
func (c *conn) producerInit(f wire.Frame) {
	var m wire.ProducerInit
	if err := wire.DecodeControl(f, c.s.cfg.Limits, &m); err != nil {
		c.answer(f.RequestID, toWire(err))
		return
	}
	st, id, err := c.stream(m.Stream, ActionProducerInit)
	if err == nil {
		_, err = st.Shard(int(m.Shard))
	}
	if err == nil {
		if local, leader := c.s.cfg.Engine.Owner().Leader(id, int(m.Shard)); !local {
			err = &engine.NotLeaderError{Stream: id, Shard: int(m.Shard), Leader: leader}
		}
	}
	if err != nil {
		c.answer(f.RequestID, toWire(err))
		return
	}
	if !c.s.admit() {
		c.answer(f.RequestID, errShuttingDown)
		return
	}
	producers := c.s.cfg.Producers
	go func() {
		defer c.s.work.done()
		pid, err := producers.Register()
		if err != nil {
			c.sendError(f.RequestID, producerToWire(err))
			return
		}
		c.sendControl(f.RequestID, &wire.ProducerInitOK{ProducerID: pid.Producer, Epoch: uint32(pid.Epoch)})
	}()
}

// publishIdempotent hands an idempotent batch to the producers, which
// append it unless the shard already holds it, and answers
// PUBLISH_IDEMPOTENT_ACK when it is durable (at once, from memory, for a
// re-send of a batch already acknowledged). The publish is admitted
// (counted as work); recs alias the frame until Publish returns. Loop
// only.
func (c *conn) publishIdempotent(requestID uint64, st *engine.Stream, p *wire.Publish, recs []engine.Record) {
	m := c.s.cfg.Producers
	seq := p.Producer
	if seq.Epoch != wireEpoch(m) {
		c.s.work.done()
		c.publishFailed(requestID, producerToWire(producer.ErrProducerUnknown))
		return
	}
	w := idempotentWaiters.Get().(*idempotentWaiter)
	w.c, w.requestID, w.seq = c, requestID, seq
	if c.s.cfg.Metrics.ObserveAck != nil {
		w.began = time.Now()
	}
	err := m.Publish(producer.ID{Producer: seq.ProducerID, Epoch: m.Epoch()}, st, int(seq.Shard), seq.Sequence, recs, w)
	if err != nil {
		w.release()
		c.publishFailed(requestID, producerToWire(err))
	}
}

// idempotentWaiter answers one idempotent batch. Pooled: an idempotent
// publish in steady state allocates nothing.
type idempotentWaiter struct {
	c         *conn
	requestID uint64
	seq       wire.ProducerSeq
	began     time.Time // zero unless Metrics.ObserveAck is set
}

var idempotentWaiters = sync.Pool{New: func() any { return new(idempotentWaiter) }}

// Acked runs on the shard log's committer, or on the loop for a re-send of
// a batch already acknowledged. It only encodes into the outbox.
func (w *idempotentWaiter) Acked(a producer.Ack, err error) {
	c, m := w.c, w.c.s.cfg.Metrics
	if err != nil {
		e := producerToWire(err)
		m.countPublish(e.Code)
		c.sendError(w.requestID, e)
		w.release()
		return
	}
	m.countPublish(0)
	if !a.Duplicate {
		m.PublishRecords.Add(uint64(a.Count))
	}
	o := c.out
	o.commit(wire.AppendPublishIdempotentAck(o.begin(), w.requestID, wire.IdempotentAck{ProducerSeq: w.seq,
		FirstOffset: uint64(a.First), Count: uint32(a.Count), Duplicate: a.Duplicate}))
	if !w.began.IsZero() {
		m.ObserveAck(time.Since(w.began))
	}
	w.release()
}

// release ends the publish's unit of work and pools the waiter.
func (w *idempotentWaiter) release() {
	s := w.c.s
	w.c, w.began = nil, time.Time{}
	idempotentWaiters.Put(w)
	s.work.done()
}
