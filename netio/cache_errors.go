package netio

import (
	"errors"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/netio/wire"
)

// cacheToWire is toWire for the cache frames: the cache store's errors
// first, then everything toWire knows (not_leader, storage, codec).
func cacheToWire(err error) *wire.Error {
	if e := cacheError(err); e != nil {
		return e
	}
	return toWire(err)
}

// cacheError maps the cache store's errors to their stable codes, as
// docs/protocol.md lists them; nil for an error it does not know.
func cacheError(err error) *wire.Error {
	var pe *cache.PreconditionError
	var le *cache.LaggedError
	var oe *cache.OffsetError
	switch {
	case errors.As(err, &pe):
		e := &wire.Error{Code: wire.CodePreconditionFailed, Message: err.Error()}
		if pe.Exists {
			e.Details.Offset = wire.U64(uint64(pe.Current))
		}
		return e
	case errors.As(err, &le):
		return &wire.Error{Code: wire.CodeCacheWatchLagged, Message: err.Error(),
			Details: wire.Details{FirstMissedOffset: wire.U64(uint64(le.FirstMissed))}}
	case errors.As(err, &oe):
		return &wire.Error{Code: wire.CodeOffsetPastTail, Message: err.Error(),
			Details: wire.Details{Offset: wire.U64(uint64(oe.End))}}
	}
	return cacheSentinel(err)
}

func cacheSentinel(err error) *wire.Error {
	switch {
	case errors.Is(err, cache.ErrCacheNotFound), errors.Is(err, cache.ErrCacheDropped):
		return &wire.Error{Code: wire.CodeNotFound, Message: err.Error()}
	case errors.Is(err, cache.ErrCacheExists):
		return &wire.Error{Code: wire.CodeAlreadyExists, Message: err.Error()}
	case errors.Is(err, cache.ErrClosed):
		return &wire.Error{Code: wire.CodeShuttingDown, Message: err.Error()}
	case errors.Is(err, engine.ErrInvalidName):
		return invalid("cache", err)
	case errors.Is(err, cache.ErrInvalidConfig):
		return invalid("config", err)
	case errors.Is(err, cache.ErrNoStorage):
		return invalid("config.durable", err)
	case errors.Is(err, cache.ErrEmptyKey):
		return invalid("key", err)
	case errors.Is(err, cache.ErrInvalidExpiry):
		return invalid("expiry", err)
	case errors.Is(err, cache.ErrInvalidCondition):
		return invalid("condition", err)
	case errors.Is(err, cache.ErrInvalidWatch):
		return invalid("watch", err)
	case errors.Is(err, cache.ErrCounterOverflow):
		return invalid("delta", err)
	case errors.Is(err, cache.ErrNoShard):
		return invalid("shard", err)
	case errors.Is(err, cache.ErrKeyTooLarge):
		return &wire.Error{Code: wire.CodeLimitExceeded, Message: err.Error(), Details: wire.Details{Limit: wire.LimitKeyBytes}}
	case errors.Is(err, cache.ErrValueTooLarge):
		return &wire.Error{Code: wire.CodeLimitExceeded, Message: err.Error(), Details: wire.Details{Limit: wire.LimitFrameBytes}}
	case errors.Is(err, cache.ErrSnapshotTooLarge):
		return &wire.Error{Code: wire.CodeLimitExceeded, Message: err.Error()} // the store's snapshot bound, no wire limit
	}
	return nil
}
