package netio

import (
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio/wire"
)

// FrameWaiter is told the leader's answer to a frame forwarded whole
// (Forwarder.ForwardFrame).
type FrameWaiter interface {
	// Answered gets the leader's answer, one frame (its ERROR included),
	// valid only during the call: copy what outlives it. When no answer
	// came (or it was not of the request's kind), answer is zero and err
	// says why. It runs on a transport goroutine and must not block.
	Answered(answer wire.Frame, err *wire.Error)
}

// ForwardFrame forwards a client's request, whole, to the broker that
// leads shard of owner (a cache's shards under cache.ID.OwnershipID),
// wrapped in a FORWARD with cred, and tells w the answer. Only requests
// with one answer are forwarded so: CACHE_GET, CACHE_PUT, CACHE_DELETE,
// COUNTER_ADD and COUNTER_GET (publishes go through Forward). It returns
// an error, and tells w nothing, when nothing was sent: an
// *engine.NotLeaderError when no leader is known, a *wire.Error when the
// transport refused. req and cred are copied before it returns; it never
// blocks.
func (f *Forwarder) ForwardFrame(owner engine.StreamID, shard int, cred []byte, req wire.Frame, w FrameWaiter) error {
	want, ok := forwardedAnswer(req.Type)
	if !ok {
		return &wire.Error{Code: wire.CodeInvalidArgument, Message: req.Type.String() + " is not forwarded"}
	}
	broker, ok := f.cfg.Router.LeaderBroker(owner, shard)
	if !ok {
		f.cfg.Metrics.NoLeader.Add(1)
		return &engine.NotLeaderError{Stream: owner, Shard: shard}
	}
	if len(cred) > credentialBytesMax {
		return errCredentialTooLong
	}
	fc := f.calls.Get().(*forwardCall)
	fc.fw, fc.want, fc.shard = w, want, shard
	fc.buf = appendForwardedFrame(fc.buf[:0], req, cred)
	return f.send(fc, broker, owner, shard)
}

// forwardedAnswer is the answer a forwardable request has besides ERROR.
func forwardedAnswer(t wire.Type) (wire.Type, bool) {
	switch t {
	case wire.TypeCacheGet:
		return wire.TypeCacheValue, true
	case wire.TypeCachePut, wire.TypeCacheDelete:
		return wire.TypeCacheWritten, true
	case wire.TypeCounterAdd, wire.TypeCounterGet:
		return wire.TypeCounterValue, true
	}
	return 0, false
}
