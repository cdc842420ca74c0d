package netio

import (
	"github.com/felixbroker/felix/netio/wire"
)

// streamAdmin handles STREAM_CREATE, STREAM_DELETE, STREAM_DESCRIBE and
// STREAM_LIST. Creating and deleting touch the disk (the catalog is synced,
// shard logs opened or closed), and describing reads each shard's first
// records (its usage), so they run on a goroutine of their own and answer
// from there; listing reads memory and answers at once.
// Loop only.
func (c *conn) streamAdmin(f wire.Frame) {
	m := wire.NewControl(f.Type)
	if err := wire.DecodeControl(f, c.s.cfg.Limits, m); err != nil {
		c.answer(f.RequestID, toWire(err))
		return
	}
	switch m := m.(type) {
	case *wire.StreamCreate:
		c.streamCreate(f.RequestID, m)
	case *wire.StreamDelete:
		c.streamDelete(f.RequestID, m)
	case *wire.StreamDescribe:
		c.streamDescribe(f.RequestID, m)
	case *wire.StreamList:
		c.streamList(f.RequestID, m)
	}
}

func (c *conn) streamCreate(requestID uint64, m *wire.StreamCreate) {
	id := idOf(m.Stream)
	if err := c.principal.Allow(ActionStreamCreate, resourceOf(id)); err != nil {
		c.answer(requestID, refusal(err, wire.CodeForbidden))
		return
	}
	cfg, err := engineConfig(m.Config)
	if err != nil {
		c.answer(requestID, toWire(err))
		return
	}
	if !c.s.admit() {
		c.answer(requestID, errShuttingDown)
		return
	}
	go func() {
		defer c.s.work.done()
		e := c.s.cfg.Engine
		if _, err := e.CreateStream(id, cfg); err != nil {
			c.sendError(requestID, toWire(err))
			return
		}
		st, err := e.Stream(id)
		if err != nil {
			c.sendError(requestID, toWire(err))
			return
		}
		c.sendControl(requestID, c.s.streamInfo(st))
	}()
}

func (c *conn) streamDelete(requestID uint64, m *wire.StreamDelete) {
	id := idOf(m.Stream)
	if err := c.principal.Allow(ActionStreamDelete, resourceOf(id)); err != nil {
		c.answer(requestID, refusal(err, wire.CodeForbidden))
		return
	}
	if !c.s.admit() {
		c.answer(requestID, errShuttingDown)
		return
	}
	go func() {
		defer c.s.work.done()
		if err := c.s.cfg.Engine.DeleteStream(id); err != nil {
			c.sendError(requestID, toWire(err))
			return
		}
		c.sendOK(requestID)
	}()
}

func (c *conn) streamDescribe(requestID uint64, m *wire.StreamDescribe) {
	id := idOf(m.Stream)
	if err := c.principal.Allow(ActionStreamDescribe, resourceOf(id)); err != nil {
		c.answer(requestID, refusal(err, wire.CodeForbidden))
		return
	}
	st, err := c.s.cfg.Engine.Stream(id)
	if err != nil {
		c.answer(requestID, toWire(err))
		return
	}
	if !c.s.admit() {
		c.answer(requestID, errShuttingDown)
		return
	}
	go func() { // a shard's usage reads its log's first records
		defer c.s.work.done()
		c.sendControl(requestID, c.s.streamInfo(st))
	}()
}

func (c *conn) streamList(requestID uint64, m *wire.StreamList) {
	res := Resource{Tenant: m.Tenant, Namespace: m.Namespace}
	if err := c.principal.Allow(ActionStreamList, res); err != nil {
		c.answer(requestID, refusal(err, wire.CodeForbidden))
		return
	}
	out := &wire.StreamListResult{Streams: []wire.StreamRef{}}
	for _, info := range c.s.cfg.Engine.Streams(m.Tenant, m.Namespace) {
		out.Streams = append(out.Streams, wireRef(info.ID))
	}
	c.sendControl(requestID, out)
}
