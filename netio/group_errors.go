package netio

import (
	"errors"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/group"
	"github.com/felixbroker/felix/engine/producer"
	"github.com/felixbroker/felix/netio/wire"
)

// limitGroupsPerShard names the engine's bound on a shard's groups in a
// limit_exceeded refusal.
const limitGroupsPerShard wire.Limit = "groups_per_shard_max"

// groupToWire is toWire for the errors of consumer groups: each of
// engine/group's sentinels has a stable code; the rest are the engine's.
func groupToWire(err error) *wire.Error {
	switch {
	case errors.Is(err, group.ErrNotFound):
		return &wire.Error{Code: wire.CodeNotFound, Message: err.Error()}
	case errors.Is(err, group.ErrExists):
		return &wire.Error{Code: wire.CodeAlreadyExists, Message: err.Error()}
	case errors.Is(err, group.ErrInvalid):
		return &wire.Error{Code: wire.CodeInvalidArgument, Message: err.Error()}
	case errors.Is(err, group.ErrNotDurable):
		return invalid("stream", err)
	case errors.Is(err, group.ErrTooManyGroups):
		return &wire.Error{Code: wire.CodeLimitExceeded, Message: err.Error(), Details: wire.Details{Limit: limitGroupsPerShard}}
	case errors.Is(err, group.ErrNotClaimed):
		return &wire.Error{Code: wire.CodeClaimNotHeld, Message: err.Error()}
	case errors.Is(err, group.ErrNotDead):
		return &wire.Error{Code: wire.CodeNotFound, Message: err.Error()}
	case errors.Is(err, group.ErrClosed):
		return &wire.Error{Code: wire.CodeShuttingDown, Message: err.Error()}
	}
	return toWire(err)
}

// producerToWire is toWire for idempotent publishing.
func producerToWire(err error) *wire.Error {
	var se *producer.SequenceError
	switch {
	case errors.As(err, &se):
		return &wire.Error{Code: wire.CodeSequenceGap, Message: err.Error(),
			Details: wire.Details{ExpectedSequence: wire.U64(se.Expected)}}
	case errors.Is(err, producer.ErrProducerUnknown):
		return &wire.Error{Code: wire.CodeProducerUnknown, Message: err.Error()}
	case errors.Is(err, producer.ErrSequenceStale):
		// The batch landed long ago; its offsets are no longer known.
		return &wire.Error{Code: wire.CodeAlreadyExists, Message: err.Error()}
	case errors.Is(err, producer.ErrTooManyInFlight), errors.Is(err, producer.ErrTooManyProducers):
		return &wire.Error{Code: wire.CodeOverloaded, Message: err.Error(), Details: wire.Details{RetryAfterMillis: 10}}
	case errors.Is(err, engine.ErrWrongShard):
		return invalid("key", err)
	}
	return toWire(err)
}
