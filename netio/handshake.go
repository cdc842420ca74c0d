package netio

import (
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// handshake handles the first frame: it must be HELLO. Anything else, a
// version range this broker does not speak, or a token the Authenticator
// refuses is answered with ERROR and the connection closes.
func (c *conn) handshake(f wire.Frame) {
	if c.refuseNotHello(f) {
		return
	}
	var h wire.Hello
	if err := h.Decode(f, c.s.cfg.Limits); err != nil {
		c.refuseHello(f.RequestID, toWire(err))
		return
	}
	version, features, err := wire.Negotiate(h, c.s.features())
	if err != nil {
		c.refuseHello(f.RequestID, toWire(err))
		return
	}
	if auth := c.s.cfg.Authenticator; auth != nil {
		p, err := auth.Authenticate(h.Token)
		if err != nil {
			c.s.authRefused("a client's HELLO", c.remote, string(h.ClientName), err)
			c.refuseHello(f.RequestID, refusal(err, wire.CodeUnauthenticated))
			return
		}
		if e := c.bindPrincipal(p); e != nil {
			c.refuseHello(f.RequestID, e)
			return
		}
	}
	c.subMu.Lock()
	c.clientName = string(h.ClientName)
	c.subMu.Unlock()
	c.features.Store(uint64(features))
	c.helloDone.Store(true)
	b := c.out.begin()
	c.out.commit(wire.AppendHelloOK(b, f.RequestID, wire.HelloOK{
		Version: version, Features: features, BrokerID: []byte(c.s.cfg.BrokerID),
		Limits: c.s.cfg.Limits, IdleTimeoutMillis: c.s.cfg.idleTimeoutMillis(),
	}))
}

// refuseNotHello refuses a first frame that is not HELLO, from its header
// alone, and reports whether it did.
func (c *conn) refuseNotHello(f wire.Frame) bool {
	if f.Type == wire.TypeHello {
		return false
	}
	c.refuseHello(f.RequestID, &wire.Error{Code: wire.CodeHandshakeRequired,
		Message: "the first frame must be HELLO, not " + f.Type.String()})
	return true
}

func (c *conn) refuseHello(requestID uint64, e *wire.Error) {
	c.s.cfg.Metrics.HandshakesFailed.Add(1)
	c.refuse(requestID, e)
}

// sweep is the timer: OnTick calls it with the time, and tests call it with
// a fake one. It moves the coarse clock connections stamp their activity
// with, closes every connection past its handshake, frame or idle
// deadline, and drops the kept buffers of outboxes idle since the last;
// and it closes the relay connections whose token expired or that sat
// idle (sweepRelays).
func (s *Server) sweep(now time.Time) {
	ns := now.UnixNano()
	s.clock.Store(ns)
	for _, c := range s.connections() {
		c.checkTimers(ns)
		c.out.trimIdle()
	}
	s.sweepRelays(ns)
}

// checkTimers closes the connection with handshake_timeout, frame_timeout
// or idle_timeout when its deadline has passed. Called by the sweep, off
// the loop. While a frame is arriving, its deadline stands in for the idle
// one (with no frame timeout, the idle one runs on: trickled bytes are not
// activity, only whole frames are).
func (c *conn) checkTimers(now int64) {
	cfg := &c.s.cfg
	if c.helloDone.Load() && c.checkExpiry(now) {
		return
	}
	since := c.part.since.Load()
	switch {
	case !c.helloDone.Load():
		if time.Duration(now-c.openedAt) >= cfg.HandshakeTimeout {
			c.expire(&cfg.Metrics.HandshakesFailed,
				&wire.Error{Code: wire.CodeHandshakeTimeout, Message: "no HELLO within " + cfg.HandshakeTimeout.String()})
		}
	case since != 0 && cfg.FrameTimeout > 0:
		if time.Duration(now-since) >= cfg.FrameTimeout {
			c.expire(&cfg.Metrics.FrameTimeouts,
				&wire.Error{Code: wire.CodeFrameTimeout, Message: "a frame did not arrive whole within " + cfg.FrameTimeout.String()})
		}
	case cfg.IdleTimeout > 0:
		if time.Duration(now-c.lastActive.Load()) >= cfg.IdleTimeout {
			c.expire(&cfg.Metrics.IdleTimeouts,
				&wire.Error{Code: wire.CodeIdleTimeout, Message: "silent for " + cfg.IdleTimeout.String()})
		}
	}
}

// expire sends the timeout's ERROR (request id 0) and closes once it is
// written; only the first timeout counts.
func (c *conn) expire(counter *atomic.Uint64, e *wire.Error) {
	if c.expired.Swap(true) {
		return
	}
	counter.Add(1)
	c.sendError(0, e)
	c.out.closeAfterFlush()
}
