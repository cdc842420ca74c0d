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
	// closed and opened again from disk (Reopen).
	ErrPoisoned = errors.New("felix/shardlog: log failed and must be reopened")
	// ErrNoSpace matches the refusal of an append for lack of disk space
	// before any byte of it was written: it is not in the log, and may be
	// sent again once space is freed. An append whose bytes may have
	// reached a file before the failure matches ErrPoisoned and
	// syscall.ENOSPC, never ErrNoSpace: it may be in the log.
	ErrNoSpace = errors.New("felix/shardlog: no space left on the device")
	// ErrStaleGeneration is an append at a generation below the log's last.
	ErrStaleGeneration = errors.New("felix/shardlog: generation below the log's last")
	// ErrBelowStart and ErrPastEnd are the two kinds of OffsetError.
	ErrBelowStart = errors.New("felix/shardlog: offset below the log's start (removed by retention)")
	ErrPastEnd    = errors.New("felix/shardlog: offset past the log's end")
	// ErrNotContiguous is a replica append whose first offset or previous
	// generation does not follow the log. Each of ErrGap, ErrOverlap and
	// ErrDiverged matches it too, through a *DivergenceError.
	ErrNotContiguous = errors.New("felix/shardlog: records do not follow the log")
	// ErrGap is an AppendAt past the log's next offset: records between
	// are missing; the follower asks its leader again from End.
	ErrGap = errors.New("felix/shardlog: records start past the log's next offset")
	// ErrOverlap is an AppendAt below the log's next offset: the log
	// already has records there; the follower compares them with the
	// leader's and truncates where they differ, or skips what it has.
	ErrOverlap = errors.New("felix/shardlog: records start below the log's next offset")
	// ErrDiverged is an AppendAt at the log's next offset whose previous
	// record the leader wrote under another generation than this log's:
	// the follower truncates (AppendAt says where) and asks again.
	ErrDiverged = errors.New("felix/shardlog: the previous record's generation differs from the leader's")
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

// DivergenceError is an AppendAt refused because its records do not
// continue this log; nothing of it was appended. Kind says why, and
// errors.Is matches it: ErrGap, ErrOverlap, ErrDiverged (each also
// ErrNotContiguous) or ErrStaleGeneration. The fields are what a
// follower's catch-up loop acts on without parsing the message.
type DivergenceError struct {
	Want    int64  // the log's next offset: where a continuing batch starts
	LastGen uint32 // the generation the log has at Want-1 (see AppendAt)
	Got     int64  // the batch's first offset
	PrevGen uint32 // the leader's generation at Got-1
	Gen     uint32 // the batch's generation
	Kind    error  // ErrGap, ErrOverlap, ErrDiverged or ErrStaleGeneration
}

func (e *DivergenceError) Error() string {
	return fmt.Sprintf("%v: batch at %d after generation %d, written under %d; log continues at %d after generation %d",
		e.Kind, e.Got, e.PrevGen, e.Gen, e.Want, e.LastGen)
}

// Unwrap makes errors.Is match Kind, and ErrNotContiguous for every kind
// but a stale generation (a stale leader, not a log that does not follow).
func (e *DivergenceError) Unwrap() []error {
	if e.Kind == ErrStaleGeneration {
		return []error{e.Kind}
	}
	return []error{e.Kind, ErrNotContiguous}
}

// failure wraps an IO error as the log's poison: it matches ErrPoisoned
// and the IO error itself. Its refusal (refused set) is what an append none
// of whose bytes were written is told, and only a refusal caused by ENOSPC
// matches ErrNoSpace: so ErrNoSpace always means "not in the log".
type failure struct {
	op      string
	err     error
	refused bool
}

func (f *failure) Error() string {
	cause := "failed, log must be reopened"
	if errors.Is(f.err, syscall.ENOSPC) {
		cause = "no space left on the device"
	}
	if f.refused {
		return fmt.Sprintf("felix/shardlog: refused, nothing written: %s: %s: %v", f.op, cause, f.err)
	}
	return fmt.Sprintf("felix/shardlog: %s: %s: %v", f.op, cause, f.err)
}

func (f *failure) Unwrap() []error {
	errs := []error{ErrPoisoned, f.err}
	if f.refused && errors.Is(f.err, syscall.ENOSPC) {
		errs = append(errs, ErrNoSpace)
	}
	return errs
}

// refusal is f as told to an append none of whose bytes were written.
func (f *failure) refusal() *failure {
	return &failure{op: f.op, err: f.err, refused: true}
}

// mayBeWritten is f as told to an append whose bytes may have reached a
// file before the failure.
func (f *failure) mayBeWritten() *failure {
	return &failure{op: f.op, err: f.err}
}

var errStopped = errors.New("felix/shardlog: stopped")

// ErrEmptyBatch is an Append of no entries.
var ErrEmptyBatch = errors.New("felix/shardlog: empty batch")
