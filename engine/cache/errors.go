package cache

import (
	"errors"
	"fmt"
)

// Errors a caller can test with errors.Is. The network layer maps each to
// a stable wire code (in parentheses where one exists).
var (
	ErrClosed           = errors.New("felix/cache: closed")                      // shutting_down
	ErrCacheNotFound    = errors.New("felix/cache: cache not found")             // not_found
	ErrCacheExists      = errors.New("felix/cache: cache already exists")        // already_exists
	ErrCacheDropped     = errors.New("felix/cache: cache dropped")               // not_found
	ErrInvalidConfig    = errors.New("felix/cache: invalid cache configuration") // invalid_argument
	ErrNoStorage        = errors.New("felix/cache: needs a storage directory (durable caches and counters)")
	ErrEmptyKey         = errors.New("felix/cache: empty key")                 // invalid_argument
	ErrKeyTooLarge      = errors.New("felix/cache: key over the size limit")   // limit_exceeded
	ErrValueTooLarge    = errors.New("felix/cache: value over the size limit") // limit_exceeded
	ErrInvalidExpiry    = errors.New("felix/cache: invalid expiry")            // invalid_argument
	ErrInvalidCondition = errors.New("felix/cache: invalid condition")         // invalid_argument
	ErrInvalidWatch     = errors.New("felix/cache: invalid watch")             // invalid_argument
	// ErrPreconditionFailed matches every *PreconditionError.
	ErrPreconditionFailed = errors.New("felix/cache: precondition failed") // precondition_failed
	// ErrWatchLagged matches every *LaggedError.
	ErrWatchLagged      = errors.New("felix/cache: watch fell behind") // cache_watch_lagged
	ErrOffsetPastEnd    = errors.New("felix/cache: offset past the shard's end")
	ErrSnapshotTooLarge = errors.New("felix/cache: snapshot over its size limit") // limit_exceeded
	ErrCounterOverflow  = errors.New("felix/cache: counter sum would overflow")   // invalid_argument
	ErrNoShard          = errors.New("felix/cache: no such shard")                // invalid_argument
)

// PreconditionError is a conditional write whose condition did not hold.
// Current is the offset of the write that produced the key's live value,
// when Exists.
type PreconditionError struct {
	Exists  bool
	Current int64 // -1 when the key holds no live value
}

func (e *PreconditionError) Error() string {
	if !e.Exists {
		return fmt.Sprintf("%v: the key holds no value", ErrPreconditionFailed)
	}
	return fmt.Sprintf("%v: the key's current offset is %d", ErrPreconditionFailed, e.Current)
}

// Unwrap makes errors.Is(err, ErrPreconditionFailed) true.
func (e *PreconditionError) Unwrap() error { return ErrPreconditionFailed }

// LaggedError ends a watch that fell behind: its queue filled, or (Compacted)
// compaction removed records its catch-up had not read yet. Resuming from
// FirstMissed misses nothing: the log replays it, or, when compaction has
// collapsed it, the resumed watch starts with a resnapshot.
type LaggedError struct {
	FirstMissed int64
	Compacted   bool
}

func (e *LaggedError) Error() string {
	why := "its queue was full"
	if e.Compacted {
		why = "compaction overtook its catch-up"
	}
	return fmt.Sprintf("%v (%s): first missed offset %d", ErrWatchLagged, why, e.FirstMissed)
}

// Unwrap makes errors.Is(err, ErrWatchLagged) true.
func (e *LaggedError) Unwrap() error { return ErrWatchLagged }

// OffsetError is a watch resuming past the shard's end.
type OffsetError struct {
	Offset, End int64
}

func (e *OffsetError) Error() string {
	return fmt.Sprintf("%v: offset %d, the shard ends at %d", ErrOffsetPastEnd, e.Offset, e.End)
}

// Unwrap makes errors.Is(err, ErrOffsetPastEnd) true.
func (e *OffsetError) Unwrap() error { return ErrOffsetPastEnd }
