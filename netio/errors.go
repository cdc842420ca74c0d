package netio

import (
	"errors"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/catalog"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
)

// Errors a caller can test with errors.Is.
var (
	ErrStarted     = errors.New("felix/netio: server already started")
	ErrNotStarted  = errors.New("felix/netio: server not started")
	ErrStopped     = errors.New("felix/netio: server stopped")
	errConnClosed  = errors.New("felix/netio: connection closed")
	errUnsubscribe = errors.New("felix/netio: unsubscribed")
)

// errShuttingDown refuses work once Stop has begun.
var errShuttingDown = &wire.Error{Code: wire.CodeShuttingDown, Message: "the broker is shutting down"}

// toWire turns any error the engine, the codec or a principal returns into
// the ERROR a client gets: a stable code, a message, and the details the
// code names.
func toWire(err error) *wire.Error {
	var c wire.Code
	if errors.As(err, &c) {
		return wire.ErrorFrom(err)
	}
	if e := engineError(err); e != nil {
		return e
	}
	if e := storageError(err); e != nil {
		return e
	}
	return wire.ErrorFrom(err)
}

func engineError(err error) *wire.Error {
	var nl *engine.NotLeaderError
	var oe *engine.OffsetError
	var le *engine.LaggedError
	switch {
	case errors.As(err, &nl):
		return &wire.Error{Code: wire.CodeNotLeader, Message: err.Error(),
			Details: wire.Details{LeaderAddr: nl.Leader, Shard: wire.U32(uint32(nl.Shard))}}
	case errors.As(err, &oe):
		if errors.Is(err, engine.ErrOffsetPastEnd) {
			return &wire.Error{Code: wire.CodeOffsetPastTail, Message: err.Error(),
				Details: wire.Details{Offset: wire.U64(uint64(oe.End))}}
		}
		return &wire.Error{Code: wire.CodeOffsetBelowRetention, Message: err.Error(),
			Details: wire.Details{Offset: wire.U64(uint64(oe.Start))}}
	case errors.As(err, &le):
		return &wire.Error{Code: wire.CodeSubscriberLagged, Message: err.Error(),
			Details: wire.Details{FirstMissedOffset: wire.U64(uint64(le.FirstMissed))}}
	case errors.Is(err, engine.ErrStreamNotFound), errors.Is(err, engine.ErrStreamDeleted):
		return &wire.Error{Code: wire.CodeNotFound, Message: err.Error()}
	case errors.Is(err, engine.ErrStreamExists):
		return &wire.Error{Code: wire.CodeAlreadyExists, Message: err.Error()}
	case errors.Is(err, engine.ErrInvalidName):
		return invalid("stream", err)
	case errors.Is(err, engine.ErrNoShard):
		return invalid("shard", err)
	case errors.Is(err, engine.ErrNoStorage):
		return invalid("config.durable", err)
	case errors.Is(err, engine.ErrInvalidConfig), errors.Is(err, engine.ErrEmptyPublish):
		return invalid("config", err)
	case errors.Is(err, engine.ErrClosed):
		return &wire.Error{Code: wire.CodeShuttingDown, Message: err.Error()}
	}
	return nil
}

func storageError(err error) *wire.Error {
	switch {
	case errors.Is(err, shardlog.ErrNoSpace), errors.Is(err, engine.ErrNoSpace), errors.Is(err, catalog.ErrNoSpace):
		// Refused for lack of space before any byte of it was written (a
		// publish), or leaving nothing (a create): not ambiguous, and it
		// succeeds once space is freed (the shard reopens by itself).
		return &wire.Error{Code: wire.CodeStorageFull, Message: err.Error()}
	case errors.Is(err, shardlog.ErrPoisoned):
		return &wire.Error{Code: wire.CodeStorageFailed, Message: err.Error()}
	case errors.Is(err, shardlog.ErrOffline):
		return &wire.Error{Code: wire.CodeStorageCorrupt, Message: err.Error()}
	case errors.Is(err, shardlog.ErrClosed):
		return &wire.Error{Code: wire.CodeShuttingDown, Message: err.Error()}
	}
	return nil
}

func invalid(field string, err error) *wire.Error {
	return &wire.Error{Code: wire.CodeInvalidArgument, Message: err.Error(), Details: wire.Details{Field: field}}
}

// refusal is the error a principal's refusal becomes: its own wire code if
// it carries one, forbidden otherwise.
func refusal(err error, fallback wire.Code) *wire.Error {
	var c wire.Code
	if errors.As(err, &c) {
		return wire.ErrorFrom(err)
	}
	return &wire.Error{Code: fallback, Message: err.Error()}
}

// fatal reports whether an error on a request means the byte stream can no
// longer be trusted, so the connection must close after answering.
func fatal(code wire.Code) bool {
	switch code {
	case wire.CodeMalformedFrame, wire.CodeFrameTooLarge, wire.CodeUnknownFrameType,
		wire.CodeHandshakeRequired, wire.CodeUnsupportedVersion, wire.CodeUnauthenticated:
		return true
	}
	return false
}

var errUnknownSockaddr = errors.New("felix/netio: the listener's address is of an unknown family")
