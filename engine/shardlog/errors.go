package shardlog

import (
	"errors"
	"fmt"
	"syscall"
)

// Errors a caller can test with errors.Is.
var (
	ErrClosed = errors.New("felix/shardlog: log closed")
	// ErrPoisoned matches the error of every append after a write or sync
	// failed. The page cache can no longer be trusted; the log must be
	// closed and opened again from disk.
	ErrPoisoned = errors.New("felix/shardlog: log failed and must be reopened")
	// ErrNoSpace matches a failure for lack of disk space.
	ErrNoSpace = errors.New("felix/shardlog: no space left on the device")
	// ErrStaleGeneration is an append at a generation below the log's last.
	ErrStaleGeneration = errors.New("felix/shardlog: generation below the log's last")
	// ErrBelowStart and ErrPastEnd are the two kinds of OffsetError.
	ErrBelowStart = errors.New("felix/shardlog: offset below the log's start (removed by retention)")
	ErrPastEnd    = errors.New("felix/shardlog: offset past the log's end")
	// ErrNotContiguous is a replica append whose first offset or previous
	// generation does not follow the log.
	ErrNotContiguous = errors.New("felix/shardlog: records do not follow the log")
	// ErrBusy is a Truncate while appends are still being written.
	ErrBusy = errors.New("felix/shardlog: appends in flight")
	// ErrInvalidOptions is an Open refused before touching the disk.
	ErrInvalidOptions = errors.New("felix/shardlog: invalid options")
)

// OffsetError is a read or truncate at an offset the log does not hold.
type OffsetError struct {
	Offset int64
	Start  int64 // first offset the log holds
	End    int64 // one past the last visible offset
	Kind   error // ErrBelowStart or ErrPastEnd
}

func (e *OffsetError) Error() string {
	return fmt.Sprintf("%v: offset %d, log holds [%d, %d)", e.Kind, e.Offset, e.Start, e.End)
}

// Unwrap makes errors.Is(err, ErrBelowStart) (or ErrPastEnd) true.
func (e *OffsetError) Unwrap() error { return e.Kind }

// failure wraps an IO error as the log's poison: it matches ErrPoisoned,
// the IO error itself, and ErrNoSpace when the cause is ENOSPC.
type failure struct {
	op  string
	err error
}

func (f *failure) Error() string {
	if errors.Is(f.err, syscall.ENOSPC) {
		return fmt.Sprintf("felix/shardlog: %s: no space left on the device: %v", f.op, f.err)
	}
	return fmt.Sprintf("felix/shardlog: %s failed, log must be reopened: %v", f.op, f.err)
}

func (f *failure) Unwrap() []error {
	errs := []error{ErrPoisoned, f.err}
	if errors.Is(f.err, syscall.ENOSPC) {
		errs = append(errs, ErrNoSpace)
	}
	return errs
}

var errStopped = errors.New("felix/shardlog: stopped")

// ErrEmptyBatch is an Append of no entries.
var ErrEmptyBatch = errors.New("felix/shardlog: empty batch")
