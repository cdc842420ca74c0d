package netio

import (
	"errors"
	"fmt"

	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio/wire"
)

// The errors a forwarded request fails with when the peer transport, not
// the leader, ends it. A client decides from the code whether to resend
// and whether the request may have been applied, so the code says what
// the transport knows:
//
//   - nothing was sent (peer.ErrNotSent): busy is overloaded, this broker
//     closing is shutting_down, a frame the leader would not take is
//     limit_exceeded, anything else (unreachable, the handshake refused)
//     is not_leader naming the leader's broker id: this broker cannot
//     serve it, the leader may be reached directly. None is ambiguous.
//   - it was sent and no answer came (peer.ErrOutcomeUnknown: timed out,
//     the connection lost, this broker closing): timeout, which is
//     retryable and ambiguous: the leader may have applied it.
//
// The leader's own ERROR is never one of these: it is relayed as it came
// (leaderError), so its code (not_leader from a leader that moved on,
// unauthenticated, forbidden, ...) reaches the client unchanged.

// notSentError is the error of a request the transport refused to send.
func notSentError(err error, broker string, id engine.StreamID, shard int) *wire.Error {
	switch {
	case errors.Is(err, peer.ErrBusy):
		return &wire.Error{Code: wire.CodeOverloaded, Details: wire.Details{RetryAfterMillis: 10},
			Message: fmt.Sprintf("too many requests in flight to broker %q, the leader of %s shard %d", broker, id, shard)}
	case errors.Is(err, peer.ErrClosed):
		return &wire.Error{Code: wire.CodeShuttingDown, Message: "this broker's peer transport is closed: " + err.Error()}
	case errors.Is(err, peer.ErrBadFrame):
		return &wire.Error{Code: wire.CodeLimitExceeded, Details: wire.Details{Limit: wire.LimitFrameBytes},
			Message: fmt.Sprintf("the request cannot be forwarded to broker %q: %v", broker, err)}
	}
	return &wire.Error{Code: wire.CodeNotLeader, Details: wire.Details{LeaderID: broker, Shard: wire.U32(uint32(shard))},
		Message: fmt.Sprintf("%s shard %d is led by broker %q, which this broker cannot reach: %v", id, shard, broker, err)}
}

// failedError is the error of a request sent that got no answer.
func failedError(err error, broker string, id engine.StreamID, shard int) *wire.Error {
	return &wire.Error{Code: wire.CodeTimeout,
		Message: fmt.Sprintf("no answer from broker %q, the leader of %s shard %d (it may have been applied): %v", broker, id, shard, err)}
}

// unexpectedAnswer is a leader's answer of a type its request does not
// have: a broken leader, whose effect is unknown.
func unexpectedAnswer(t wire.Type, broker string, id engine.StreamID, shard int) *wire.Error {
	return &wire.Error{Code: wire.CodeInternal,
		Message: fmt.Sprintf("broker %q, the leader of %s shard %d, answered a forwarded request with an unexpected %v", broker, id, shard, t)}
}

// leaderError is the leader's ERROR, decoded: relayed to the client as it
// is (toWire keeps a *wire.Error).
func leaderError(answer wire.Frame) *wire.Error {
	e := new(wire.Error)
	if err := e.Decode(answer, wire.Limits{}); err != nil {
		return &wire.Error{Code: wire.CodeInternal, Message: "the leader's ERROR does not decode: " + err.Error()}
	}
	return e
}
