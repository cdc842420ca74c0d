package netio

import (
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/netio/wire"
)

// Counters are scoped and routed as cache keys (their feature bit is among
// cacheFeatures, offered only by a durable store). Both frames run on a
// cache worker: a shard's first counter operation opens its counters log,
// and a get waits for an add of its key in flight.
func init() {
	frameHandlers[wire.TypeCounterAdd] = (*conn).counterAdd
	frameHandlers[wire.TypeCounterGet] = (*conn).counterGet
}

// counterAdd handles COUNTER_ADD: the answer is the sum including the add,
// once the add is acknowledged. At least once: a client that resends an
// add whose answer it lost counts it twice. A shard another broker leads
// is forwarded to it. Loop only.
func (c *conn) counterAdd(f wire.Frame) {
	var m wire.CounterAdd
	if err := m.Decode(f, c.s.cfg.Limits); err != nil {
		c.answer(f.RequestID, toWire(err))
		return
	}
	h, shard, werr := c.storingKey(m.Cache, m.Key, ActionCounter)
	if werr != nil {
		c.answer(f.RequestID, werr)
		return
	}
	if c.forwarded(f, h, shard) {
		return
	}
	c.offloadJob(f.RequestID, jobCounterAdd, h, m.Key, m.Delta)
}

// counterGet handles COUNTER_GET; a shard another broker leads is
// forwarded to it, or else not_leader: never a counter that does not
// exist. Loop only.
func (c *conn) counterGet(f wire.Frame) {
	var m wire.CounterGet
	if err := m.Decode(f, c.s.cfg.Limits); err != nil {
		c.answer(f.RequestID, toWire(err))
		return
	}
	h, shard, err := c.cacheKey(m.Cache, m.Key, ActionCounter)
	if err == nil {
		if c.forwarded(f, h, shard) {
			return
		}
		err = c.s.caches.leads(h, shard)
	}
	if err != nil {
		c.answer(f.RequestID, cacheToWire(err))
		return
	}
	c.offloadJob(f.RequestID, jobCounterGet, h, m.Key, 0)
}

// sendCounterValue answers COUNTER_ADD or COUNTER_GET. A counter never
// written is exists 0, sum 0, offset 0.
func (c *conn) sendCounterValue(requestID uint64, v cache.CounterValue, err error) {
	if err != nil {
		c.sendError(requestID, cacheToWire(err))
		return
	}
	w := wire.CounterValue{Exists: v.Exists, Sum: v.Sum}
	if v.Exists {
		w.Offset = uint64(v.Offset)
	}
	b := c.out.begin()
	c.out.commit(wire.AppendCounterValue(b, requestID, w))
}
