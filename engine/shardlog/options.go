package shardlog

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// FsyncKind is when the log makes appended records durable.
type FsyncKind uint8

// The three modes of the contract's FsyncMode table.
const (
	// FsyncPeriodic acknowledges once records are in the page cache and
	// syncs them within the interval. The default.
	FsyncPeriodic FsyncKind = iota
	// FsyncNone acknowledges once records are in the page cache and syncs
	// them only at Close, at rollover, and ahead of rollover (each eighth
	// of a segment written, in the background), so that a rollover never
	// flushes a whole segment while appenders wait.
	FsyncNone
	// FsyncOnCommit acknowledges only after the fdatasync that covers the
	// records has completed.
	FsyncOnCommit
)

// DefaultPeriodicInterval is the Periodic interval when none is given.
const DefaultPeriodicInterval = 100 * time.Millisecond

// FsyncMode is a FsyncKind with its interval (Periodic only).
type FsyncMode struct {
	Kind     FsyncKind
	Interval time.Duration
}

// Periodic, None and OnCommit build the modes.
func Periodic(interval time.Duration) FsyncMode {
	return FsyncMode{Kind: FsyncPeriodic, Interval: interval}
}

// None is FsyncNone.
func None() FsyncMode { return FsyncMode{Kind: FsyncNone} }

// OnCommit is FsyncOnCommit.
func OnCommit() FsyncMode { return FsyncMode{Kind: FsyncOnCommit} }

func (m FsyncMode) String() string {
	switch m.Kind {
	case FsyncNone:
		return "none"
	case FsyncOnCommit:
		return "on_commit"
	default:
		return "periodic:" + m.interval().String()
	}
}

func (m FsyncMode) interval() time.Duration {
	if m.Interval <= 0 {
		return DefaultPeriodicInterval
	}
	return m.Interval
}

// ParseFsyncMode reads "none", "on_commit" (or "oncommit"), "periodic" or
// "periodic:250ms".
func ParseFsyncMode(s string) (FsyncMode, error) {
	name, arg, hasArg := strings.Cut(strings.ToLower(strings.TrimSpace(s)), ":")
	switch name {
	case "none":
		return None(), nil
	case "on_commit", "oncommit", "on-commit":
		return OnCommit(), nil
	case "periodic", "":
		if !hasArg {
			return Periodic(DefaultPeriodicInterval), nil
		}
		d, err := time.ParseDuration(arg)
		if err != nil || d <= 0 {
			return FsyncMode{}, fmt.Errorf("felix/shardlog: bad periodic interval %q", arg)
		}
		return Periodic(d), nil
	}
	return FsyncMode{}, fmt.Errorf("felix/shardlog: unknown fsync mode %q (none, periodic[:interval], on_commit)", s)
}

// Retention bounds what a log keeps. Zero fields mean unbounded. Only whole
// sealed segments are ever removed, oldest first; the active one never is.
type Retention struct {
	MaxAge   time.Duration // remove a segment once its newest record is older
	MaxBytes int64         // remove the oldest segments while the log is larger
}

// Options configure a Log. FS and Dir are required.
type Options struct {
	FS  vfs.FS
	Dir string

	Fsync FsyncMode

	// SegmentBytes is the size at which the active segment is sealed and
	// a new one started (a single larger record still fits, alone).
	SegmentBytes int64
	// BufferBytes bounds the records waiting to be written; an append
	// that does not fit waits for the committer (backpressure).
	BufferBytes int
	// IndexIntervalBytes spaces the sparse index entries.
	IndexIntervalBytes int
	// PrepareSegments zero-fills and syncs the next segment in the
	// background, so records overwrite blocks that already exist (an
	// fdatasync of an overwrite skips the journal commit a growing file
	// needs). Under OnCommit only: under None and Periodic no
	// acknowledgement waits for an fdatasync, the zero-fill would double
	// the disk writes, and the option is ignored.
	PrepareSegments bool
	// TrustIndexes skips the background verification of the sealed
	// segments Open took on their index (verify.go): damage in them is
	// then found only by a read that reaches it, which takes the log
	// offline all the same. Off by default: every record is verified
	// once after each Open.
	TrustIndexes bool
	// VerifyPacer paces the background verification's reads; logs that
	// share one are paced together. nil: one pacer shared by the whole
	// process, at DefaultVerifyBytesPerSecond. NewPacer(0) does not pace.
	VerifyPacer *Pacer
	// OnOffline is called once when damage found after Open takes the log
	// offline (offline.go), with the error every later Read and Append
	// returns. It runs on the goroutine that found the damage (the
	// verifier, or a reader inside Read) with no log lock held; it must
	// not block.
	OnOffline func(err error)

	// FlushScheduler, under OnCommit, group-commits this log's flushes
	// with those of every other log that shares it (flushsched.go): their
	// syncs go to the disk together, one submission a round. nil: the
	// log's committer flushes alone, as every log did before. Ignored
	// under None and Periodic.
	FlushScheduler *FlushScheduler

	Retention Retention

	// OnVisible is called by the committer, in offset order, each time
	// records become visible (acknowledged at the log's FsyncMode). records
	// holds them framed, back to back; it is valid only during the call,
	// which must not block and must not call Append.
	OnVisible func(first, next int64, records []byte)

	// Observer receives flush and sync timings; nil for none.
	Observer Observer

	Now    func() time.Time
	Logger *slog.Logger
}

// Observer is told of the committer's work, for metrics. Its methods are
// called from the log's goroutines and must not block.
type Observer interface {
	Flushed(records, bytes int, synced bool, took time.Duration)
	Synced(took time.Duration, err error)
}

// Defaults.
const (
	DefaultSegmentBytes = 64 << 20
	DefaultBufferBytes  = 4 << 20
)

// SegmentBytesMax bounds SegmentBytes: the index holds a record's position
// in its segment in 32 bits, and a record starts below SegmentBytes (or, a
// larger one alone, right after the header).
const SegmentBytesMax = 1<<32 - 1

// check refuses options the log cannot honour.
func (o *Options) check() error {
	if o.SegmentBytes > SegmentBytesMax {
		return fmt.Errorf("%w: SegmentBytes %d is above %d (index positions are 32 bits)",
			ErrInvalidOptions, o.SegmentBytes, int64(SegmentBytesMax))
	}
	return nil
}

func (o *Options) withDefaults() Options {
	out := *o
	if out.SegmentBytes <= 0 {
		out.SegmentBytes = DefaultSegmentBytes
	}
	if out.BufferBytes <= 0 {
		out.BufferBytes = DefaultBufferBytes
	}
	if out.IndexIntervalBytes <= 0 {
		out.IndexIntervalBytes = segment.DefaultIndexIntervalBytes
	}
	if out.Now == nil {
		out.Now = time.Now
	}
	if out.VerifyPacer == nil {
		out.VerifyPacer = defaultPacer
	}
	if out.Logger == nil {
		out.Logger = slog.New(slog.DiscardHandler)
	}
	return out
}
