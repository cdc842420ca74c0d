package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/felixbroker/felix/netio/wire"
)

// Errors of the client itself, for errors.Is.
var (
	// ErrClosed: the Client, or the Subscription, was closed by its owner.
	ErrClosed = errors.New("felix/client: closed")
	// ErrConnectionLost: the connection to the broker ended while the
	// request was outstanding (or before it could be sent). A publish that
	// failed with it may or may not have been applied.
	ErrConnectionLost = errors.New("felix/client: connection to the broker lost")
	// ErrProtocol: the broker sent bytes this client cannot read; the
	// connection is closed.
	ErrProtocol = errors.New("felix/client: protocol violation by the broker")
	// ErrRetriesExhausted: PublishAtLeastOnce used every attempt its
	// RetryPolicy allows; the last failure is wrapped too.
	ErrRetriesExhausted = errors.New("felix/client: retries exhausted")
	// ErrRetryDeadline: PublishAtLeastOnce reached its RetryPolicy.Deadline;
	// the last failure is wrapped too.
	ErrRetryDeadline = errors.New("felix/client: retry deadline reached")
	// ErrNotDone: a PublishFuture's Result asked for before Done closed.
	ErrNotDone = errors.New("felix/client: publish not yet complete")
	// ErrEmptyBatch: PublishBatch of no records.
	ErrEmptyBatch = errors.New("felix/client: publish of no records")
	// ErrNotSent: the request was never sent, so nothing of it was applied:
	// its context ended before its frame was written (the context's error
	// is wrapped too, for errors.Is), or the client could not reach a
	// broker. Not Ambiguous; retrying is safe.
	ErrNotSent = errors.New("felix/client: request not sent")
	// ErrOptionNotForBatch: WithKey or WithTimestamp passed to a batch
	// publish; a batch's records carry their own.
	ErrOptionNotForBatch = errors.New("felix/client: WithKey and WithTimestamp apply to single-record publishes; set them on each Record")
)

// The per-code sentinels: errors.Is(err, ErrForbidden) holds for a
// *ServerError whose code is forbidden. One for every code of protocol
// version 1 (docs/protocol.md, "Errors").
var (
	ErrMalformedFrame       = errors.New("felix/client: malformed frame")
	ErrFrameTooLarge        = errors.New("felix/client: frame too large")
	ErrUnknownFrameType     = errors.New("felix/client: unknown frame type")
	ErrUnsupportedVersion   = errors.New("felix/client: unsupported protocol version")
	ErrHandshakeRequired    = errors.New("felix/client: handshake required")
	ErrHandshakeTimeout     = errors.New("felix/client: handshake timeout")
	ErrIdleTimeout          = errors.New("felix/client: idle timeout")
	ErrFrameTimeout         = errors.New("felix/client: frame timeout")
	ErrFeatureNotNegotiated = errors.New("felix/client: feature not negotiated")
	ErrInvalidArgument      = errors.New("felix/client: invalid argument")
	ErrLimitExceeded        = errors.New("felix/client: limit exceeded")
	ErrNotFound             = errors.New("felix/client: not found")
	ErrAlreadyExists        = errors.New("felix/client: already exists")
	ErrOffsetBelowRetention = errors.New("felix/client: offset below retention")
	ErrOffsetPastTail       = errors.New("felix/client: offset past the tail")
	ErrPreconditionFailed   = errors.New("felix/client: precondition failed")
	ErrUnauthenticated      = errors.New("felix/client: unauthenticated")
	ErrForbidden            = errors.New("felix/client: forbidden")
	ErrQuotaExceeded        = errors.New("felix/client: quota exceeded")
	ErrNotLeader            = errors.New("felix/client: not the leader")
	ErrNoQuorum             = errors.New("felix/client: no quorum")
	ErrOverloaded           = errors.New("felix/client: broker overloaded")
	ErrTimeout              = errors.New("felix/client: broker timed out")
	ErrShuttingDown         = errors.New("felix/client: broker shutting down")
	ErrStorageFull          = errors.New("felix/client: storage full")   // nothing stored: resend after a backoff, it succeeds once space is freed
	ErrStorageFailed        = errors.New("felix/client: storage failed") // may be stored: a resend may duplicate it
	ErrStorageCorrupt       = errors.New("felix/client: storage corrupt: the shard is offline")
	ErrCacheWatchLagged     = errors.New("felix/client: cache watch lagged")
	ErrSubscriberLagged     = errors.New("felix/client: subscriber lagged")
	ErrProducerUnknown      = errors.New("felix/client: producer unknown")
	ErrSequenceGap          = errors.New("felix/client: sequence gap")
	ErrClaimNotHeld         = errors.New("felix/client: claim not held")
	ErrInternal             = errors.New("felix/client: broker internal error")
)

var codeSentinels = map[wire.Code]error{
	wire.CodeMalformedFrame:       ErrMalformedFrame,
	wire.CodeFrameTooLarge:        ErrFrameTooLarge,
	wire.CodeUnknownFrameType:     ErrUnknownFrameType,
	wire.CodeUnsupportedVersion:   ErrUnsupportedVersion,
	wire.CodeHandshakeRequired:    ErrHandshakeRequired,
	wire.CodeHandshakeTimeout:     ErrHandshakeTimeout,
	wire.CodeIdleTimeout:          ErrIdleTimeout,
	wire.CodeFrameTimeout:         ErrFrameTimeout,
	wire.CodeFeatureNotNegotiated: ErrFeatureNotNegotiated,
	wire.CodeInvalidArgument:      ErrInvalidArgument,
	wire.CodeLimitExceeded:        ErrLimitExceeded,
	wire.CodeNotFound:             ErrNotFound,
	wire.CodeAlreadyExists:        ErrAlreadyExists,
	wire.CodeOffsetBelowRetention: ErrOffsetBelowRetention,
	wire.CodeOffsetPastTail:       ErrOffsetPastTail,
	wire.CodePreconditionFailed:   ErrPreconditionFailed,
	wire.CodeUnauthenticated:      ErrUnauthenticated,
	wire.CodeForbidden:            ErrForbidden,
	wire.CodeQuotaExceeded:        ErrQuotaExceeded,
	wire.CodeNotLeader:            ErrNotLeader,
	wire.CodeNoQuorum:             ErrNoQuorum,
	wire.CodeOverloaded:           ErrOverloaded,
	wire.CodeTimeout:              ErrTimeout,
	wire.CodeShuttingDown:         ErrShuttingDown,
	wire.CodeStorageFull:          ErrStorageFull,
	wire.CodeStorageFailed:        ErrStorageFailed,
	wire.CodeStorageCorrupt:       ErrStorageCorrupt,
	wire.CodeCacheWatchLagged:     ErrCacheWatchLagged,
	wire.CodeSubscriberLagged:     ErrSubscriberLagged,
	wire.CodeProducerUnknown:      ErrProducerUnknown,
	wire.CodeSequenceGap:          ErrSequenceGap,
	wire.CodeClaimNotHeld:         ErrClaimNotHeld,
	wire.CodeInternal:             ErrInternal,
}

// SentinelFor is the sentinel of a code, or nil for a code this version
// does not know.
func SentinelFor(code Code) error { return codeSentinels[wire.Code(code)] }

// ServerError is a refusal with a protocol error code: an ERROR frame from
// the broker, or (Local set) a request the client refused before sending
// because it breaks a limit the broker announced. errors.Is matches both the
// code's sentinel (ErrForbidden) and the protocol's value of the code.
type ServerError struct {
	Code    Code
	Name    string // the code's stable name, as received
	Message string
	Details Details
	// Local: the client refused the request itself; nothing was sent.
	Local bool
}

func (e *ServerError) Error() string {
	who := "broker"
	if e.Local {
		who = "client"
	}
	if e.Message == "" {
		return fmt.Sprintf("felix/client: %s refused: %s", who, e.Name)
	}
	return fmt.Sprintf("felix/client: %s refused: %s: %s", who, e.Name, e.Message)
}

// Is matches the code's sentinel.
func (e *ServerError) Is(target error) bool {
	s := codeSentinels[wire.Code(e.Code)]
	return s != nil && s == target
}

// Unwrap returns the protocol's value of the code (a netio/wire.Code),
// itself an error, so that code shared with the broker can match it.
func (e *ServerError) Unwrap() error { return wire.Code(e.Code) }

// Retryable reports whether the same request may succeed if sent again,
// from the code alone.
func (e *ServerError) Retryable() bool { return e.Code.Retryable() }

// Ambiguous reports whether the request may have been applied although it
// failed, from the code alone.
func (e *ServerError) Ambiguous() bool { return e.Code.Ambiguous() }

func serverErrorFrom(we *wire.Error) *ServerError {
	name := we.Name
	if name == "" {
		name = we.Code.String()
	}
	return &ServerError{Code: Code(we.Code), Name: name, Message: we.Message, Details: detailsFrom(we.Details)}
}

// localError turns a limit the client applied before sending into a
// *ServerError marked Local.
func localError(err error) error {
	if err == nil {
		return nil
	}
	se := serverErrorFrom(wire.ErrorFrom(err))
	se.Local = true
	return se
}

// notSentError is a request its caller gave up on before its frame was
// written: it matches ErrNotSent and the cause.
type notSentError struct{ cause error }

func (e *notSentError) Error() string   { return "felix/client: request not sent: " + e.cause.Error() }
func (e *notSentError) Unwrap() []error { return []error{ErrNotSent, e.cause} }

// notSent marks err (a context's end) as reached before anything was sent.
func notSent(err error) error {
	if err == nil || errors.Is(err, ErrNotSent) {
		return err
	}
	return &notSentError{cause: err}
}

// Retryable reports whether an operation that failed with err may succeed
// if tried again: from the code for a *ServerError (wire.Code.Retryable),
// false for ErrClosed and for a cancelled or expired context, and true for
// anything else (a lost connection, a failed dial), since a wasted attempt
// is cheaper than a lost operation.
func Retryable(err error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, ErrClosed), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	}
	var se *ServerError
	if errors.As(err, &se) {
		return se.Retryable()
	}
	return true
}

// Ambiguous reports whether a request that failed with err may
// nevertheless have been applied: false for ErrNotSent, from the code for
// a *ServerError, and true for anything else (a lost connection, a context
// that ended while the answer was awaited, a close), where the client
// cannot know. An operation tried more than once (a cluster client's, an
// at-least-once publish, a Producer's batch) is Ambiguous if any of its
// tries may have been applied, whatever its last try's failure: a later
// try that was not sent, or was refused with a code that proves nothing
// of itself, does not undo an earlier one. Such an error does not match
// ErrNotSent; errors.Is still finds each try's causes.
func Ambiguous(err error) bool {
	var unsure *unsureError
	switch {
	case errors.As(err, &unsure), errors.Is(err, ErrUnknownOutcome):
		return true
	case errors.Is(err, ErrNotSent):
		return false
	}
	var se *ServerError
	if errors.As(err, &se) {
		return !se.Local && se.Ambiguous()
	}
	return err != nil
}
