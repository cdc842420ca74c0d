package peer

import (
	"errors"
	"fmt"
)

// A failed request says first whether it may have reached the peer: a
// caller may send again whatever failed with ErrNotSent, and must treat
// whatever failed with ErrOutcomeUnknown as possibly applied. Every error
// Send, Call and Call.Done report matches exactly one of the two with
// errors.Is, and then the cause: ErrUnreachable, ErrBusy, ErrRefused,
// ErrTimeout, ErrConnectionLost, ErrClosed, or a frame the caller built
// wrong.
var (
	// ErrNotSent: the request never left this broker.
	ErrNotSent = errors.New("felix/peer: the request was not sent")
	// ErrOutcomeUnknown: the request may have reached the peer and been
	// applied; nothing came back to say.
	ErrOutcomeUnknown = errors.New("felix/peer: the outcome of the request is unknown")
)

// The causes.
var (
	// ErrUnreachable: no connection to the peer (its address is unknown,
	// the dial failed, or a redial waits out its backoff).
	ErrUnreachable = errors.New("felix/peer: peer unreachable")
	// ErrBusy: the link to the peer has InflightMax requests awaiting
	// answers, or its write buffer is full.
	ErrBusy = errors.New("felix/peer: too many requests in flight to the peer")
	// ErrRefused: the peer refused the handshake (a version range or
	// features in common missing, or it is another broker than the one
	// asked for); the *wire.Error it sent is in the chain.
	ErrRefused = errors.New("felix/peer: the peer refused the handshake")
	// ErrTimeout: the call's Timeout passed before its answer came.
	ErrTimeout = errors.New("felix/peer: the request timed out")
	// ErrConnectionLost: the connection failed while the request was on
	// it or waiting for it.
	ErrConnectionLost = errors.New("felix/peer: the connection to the peer was lost")
	// ErrClosed: this transport is closed.
	ErrClosed = errors.New("felix/peer: transport closed")
	// ErrBadFrame: the caller's request or answer is not one whole valid
	// frame of this protocol within the limits in force.
	ErrBadFrame = errors.New("felix/peer: not one whole valid frame")
)

// CallError is a failed request: which peer, whether it may have been
// sent, and why.
type CallError struct {
	Peer string
	// Sent: the request may have reached the peer (ErrOutcomeUnknown);
	// otherwise it never left (ErrNotSent).
	Sent bool
	Err  error // the cause
}

func (e *CallError) Error() string {
	if e.Sent {
		return fmt.Sprintf("felix/peer: request to %s: %v (it may have been applied)", e.Peer, e.Err)
	}
	return fmt.Sprintf("felix/peer: request to %s not sent: %v", e.Peer, e.Err)
}

// Is matches ErrOutcomeUnknown or ErrNotSent, whichever Sent says.
func (e *CallError) Is(target error) bool {
	return (target == ErrOutcomeUnknown && e.Sent) || (target == ErrNotSent && !e.Sent)
}

// Unwrap is the cause.
func (e *CallError) Unwrap() error { return e.Err }

func notSent(peer string, cause error) error { return &CallError{Peer: peer, Err: cause} }

func unknown(peer string, cause error) error { return &CallError{Peer: peer, Sent: true, Err: cause} }

// lost is the error of a request the connection's failure ends: sent or
// not, as far as the link knows.
func lost(peer string, sent bool, cause error) error {
	return &CallError{Peer: peer, Sent: sent, Err: cause}
}

// wrap joins a cause to a detail: errors.Is finds both.
func wrap(cause, detail error) error {
	if detail == nil {
		return cause
	}
	return fmt.Errorf("%w: %w", cause, detail)
}
