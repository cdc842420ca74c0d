package netio

import (
	"sync"

	"github.com/felixbroker/felix/netio/wire"
)

// forwarded forwards a cache or counter request, whole, when another
// broker leads its key's shard and this server forwards (Config.Forwarder)
// a client's requests; it reports whether it took the request. The caller
// has authorized it already: the ingress checks as it would serve it, and
// the leader checks again with the credential. A relayed request (one
// another broker forwarded here) is never forwarded again: it is answered
// not_leader, so routing cannot loop. Loop only.
func (c *conn) forwarded(f wire.Frame, h *cacheHandle, shard int) bool {
	fwd := c.s.cfg.Forwarder
	if fwd == nil || c.relayed {
		return false
	}
	if local, _ := c.s.cfg.Owner.Leader(h.owner, shard); local {
		return false
	}
	if !c.s.admit() {
		c.answer(f.RequestID, errShuttingDown)
		return true
	}
	a := forwardAnswers.Get().(*forwardAnswer)
	a.c, a.requestID = c, f.RequestID
	if err := fwd.ForwardFrame(h.owner, shard, c.credential(), f, a); err != nil {
		a.release()
		c.answer(f.RequestID, cacheToWire(err))
	}
	return true
}

// forwardAnswer writes the leader's answer to a forwarded request to the
// client, under the client's request id: a unit of the server's work
// (admitted by forwarded), pooled.
type forwardAnswer struct {
	c         *conn
	requestID uint64
}

var forwardAnswers = sync.Pool{New: func() any { return new(forwardAnswer) }}

// Answered copies the answer frame into the outbox, its request id put
// back to the client's; on a transport goroutine.
func (a *forwardAnswer) Answered(answer wire.Frame, err *wire.Error) {
	if err != nil {
		a.c.sendError(a.requestID, err)
	} else {
		b := a.c.out.begin()
		a.c.out.commitDirect(wire.AppendFrame(b, answer.Type, answer.Flags, a.requestID, answer.Body))
	}
	a.release()
}

func (a *forwardAnswer) release() {
	s := a.c.s
	*a = forwardAnswer{}
	forwardAnswers.Put(a)
	s.work.done()
}
