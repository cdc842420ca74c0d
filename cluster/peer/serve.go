package peer

import (
	"strconv"
	"sync/atomic"

	"github.com/felixbroker/felix/netio/wire"
)

// dispatch hands one request of a peer session to the handler, or answers
// it itself: a frame that needs features the session did not negotiate,
// a PING, a request over the in-service bound, none while no handler is
// set. busy counts the session's requests in service: every request adds
// one, every answer (replier.answer) takes one off.
func dispatch(h Handler, ses *session, busy *atomic.Int64, busyMax int, f wire.Frame, r Reply) {
	n := busy.Add(1)
	if need := wire.RequiredFeatures(f.Type, f.Flags); !ses.features.Has(need) {
		answerError(r, &wire.Error{Code: wire.CodeFeatureNotNegotiated, Details: wire.Details{Feature: need &^ ses.features},
			Message: f.Type.String() + " needs features the peer session did not negotiate"})
		return
	}
	switch {
	case f.Type == wire.TypePing:
		answerPong(r, f)
	case f.Type == wire.TypePeerHello:
		answerError(r, &wire.Error{Code: wire.CodeInvalidArgument, Message: "PEER_HELLO after the handshake"})
	case h == nil:
		answerError(r, &wire.Error{Code: wire.CodeOverloaded, Message: "this broker does not serve peer requests yet"})
	case n > int64(busyMax):
		answerError(r, &wire.Error{Code: wire.CodeOverloaded,
			Message: "the peer has more than " + strconv.Itoa(busyMax) + " requests in service on this connection"})
	default:
		h.ServePeer(ses.peer, f, r)
	}
}

func answerError(r Reply, e *wire.Error) { _ = r.Answer(wire.AppendError(nil, 0, e)) }

func answerPong(r Reply, f wire.Frame) {
	var p wire.Ping
	if err := p.Decode(f, wire.Limits{}); err != nil {
		answerError(r, &wire.Error{Code: wire.CodeMalformedFrame, Message: err.Error()})
		return
	}
	_ = r.Answer(wire.AppendPong(nil, 0, p.Payload))
}
