package engine

import (
	"errors"
	"fmt"
)

// Errors a caller can test with errors.Is. The network layer maps each to a
// stable wire code.
var (
	ErrClosed           = errors.New("felix/engine: engine closed")
	ErrInvalidName      = errors.New("felix/engine: invalid name")
	ErrInvalidConfig    = errors.New("felix/engine: invalid stream configuration")
	ErrStreamNotFound   = errors.New("felix/engine: stream not found")
	ErrStreamExists     = errors.New("felix/engine: stream already exists")
	ErrStreamDeleted    = errors.New("felix/engine: stream deleted")
	ErrNoShard          = errors.New("felix/engine: no such shard")
	ErrNoStorage        = errors.New("felix/engine: a durable stream needs a storage directory")
	ErrNotLeader        = errors.New("felix/engine: this broker does not lead the shard")
	ErrOffsetBelowStart = errors.New("felix/engine: offset below the shard's start (removed by retention)")
	ErrOffsetPastEnd    = errors.New("felix/engine: offset past the shard's end")
	ErrLagged           = errors.New("felix/engine: subscriber fell behind and was disconnected")
	ErrEmptyPublish     = errors.New("felix/engine: publish of no records")
	ErrWrongShard       = errors.New("felix/engine: a record's key chooses another shard")
	// ErrNoSpace matches the creation of a stream (or, package cache, of a
	// cache) refused for lack of disk space: nothing of it is left, in the
	// catalog or on disk.
	ErrNoSpace = errors.New("felix/engine: no space left on the device")
)

// NotLeaderError names the shard's leader, for a redirect.
type NotLeaderError struct {
	Stream StreamID
	Shard  int
	Leader string // address; empty when no leader is known
}

func (e *NotLeaderError) Error() string {
	return fmt.Sprintf("felix/engine: %s shard %d is led by %q", e.Stream, e.Shard, e.Leader)
}

// Unwrap makes errors.Is(err, ErrNotLeader) true.
func (e *NotLeaderError) Unwrap() error { return ErrNotLeader }

// OffsetError is a subscription or read at an offset the shard does not hold.
type OffsetError struct {
	Offset, Start, End int64
	Kind               error // ErrOffsetBelowStart or ErrOffsetPastEnd
}

func (e *OffsetError) Error() string {
	return fmt.Sprintf("%v: offset %d, shard holds [%d, %d)", e.Kind, e.Offset, e.Start, e.End)
}

// Unwrap makes errors.Is work against the kind.
func (e *OffsetError) Unwrap() error { return e.Kind }

// LaggedError ends a subscription whose overflow policy is Disconnect.
type LaggedError struct {
	FirstMissed int64 // resume here to miss nothing retention still holds
}

func (e *LaggedError) Error() string {
	return fmt.Sprintf("%v: first missed offset %d", ErrLagged, e.FirstMissed)
}

// Unwrap makes errors.Is(err, ErrLagged) true.
func (e *LaggedError) Unwrap() error { return ErrLagged }
