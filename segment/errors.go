package segment

import (
	"errors"
	"fmt"
)

// Errors a caller can test with errors.Is.
var (
	// ErrCorrupt matches every CorruptionError.
	ErrCorrupt = errors.New("felix/segment: corrupt")

	// The record decoder's verdicts. Scan turns them into a torn tail or
	// a CorruptionError; only DecodeRecord's callers see them directly.
	ErrShort          = errors.New("felix/segment: record runs past the end of the data")
	ErrZero           = errors.New("felix/segment: zero bytes where a record header belongs")
	ErrHeaderChecksum = errors.New("felix/segment: record header checksum mismatch")
	ErrBodyChecksum   = errors.New("felix/segment: record checksum mismatch")
	ErrBadLength      = errors.New("felix/segment: record header fields out of range")
)

// CorruptionError says where a segment or index is damaged and how. It is
// what the log reports when it refuses to open.
type CorruptionError struct {
	File   string // path of the damaged file
	Pos    int64  // byte position of the damage within it
	Reason string // what is wrong, for a person
	Err    error  // the decoder's verdict, when there is one
}

func (e *CorruptionError) Error() string {
	return fmt.Sprintf("felix/segment: %s: corrupt at byte %d: %s", e.File, e.Pos, e.Reason)
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptionError) Is(target error) bool { return target == ErrCorrupt }

// Unwrap exposes the decoder's verdict.
func (e *CorruptionError) Unwrap() error { return e.Err }

func corrupt(file string, pos int64, err error, format string, args ...any) *CorruptionError {
	return &CorruptionError{File: file, Pos: pos, Reason: fmt.Sprintf(format, args...), Err: err}
}
