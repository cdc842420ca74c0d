package ring

import (
	"errors"
	"fmt"
	"syscall"
)

// Op names one kind of operation a Driver performs.
type Op uint8

// The operations the storage engine needs. Frozen: Op values appear in logs
// and metrics labels.
const (
	OpNop       Op = iota // completes at once; used to wake the reaper
	OpRead                // pread(FD, Buf, Off)
	OpWrite               // pwrite(FD, Buf, Off)
	OpWritev              // pwritev(FD, Bufs, Off)
	OpFdatasync           // fdatasync(FD)
)

func (o Op) String() string {
	switch o {
	case OpNop:
		return "nop"
	case OpRead:
		return "read"
	case OpWrite:
		return "write"
	case OpWritev:
		return "writev"
	case OpFdatasync:
		return "fdatasync"
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Completion is one operation and, once the kernel (or a worker) has run it,
// its result. The caller owns every Completion: it allocates it once and
// reuses it. Between Submit and the call to Done the driver owns it, and the
// caller must touch neither the Completion nor the memory its Buf and Bufs
// name; the driver keeps that memory alive (pinned) until Done is called.
type Completion struct {
	Op   Op
	FD   int
	Off  int64
	Buf  []byte   // OpRead, OpWrite
	Bufs [][]byte // OpWritev; at most MaxIovecs entries

	// Link makes the next Completion of the same Submit call start only
	// after this one has succeeded in full (IOSQE_IO_LINK). When a linked
	// operation fails or is short, the rest of its chain completes with
	// -ECANCELED and is never run.
	Link bool

	// Done is called exactly once per Submit, after Res is set, on a
	// goroutine of the driver. It must not block and must not call Submit
	// on the same driver with a chain that could wait for free slots.
	Done func(c *Completion)

	// Tag is free for the caller, typically an index into its own table.
	Tag uint64

	// Res is the result: bytes transferred (read, write, writev), 0
	// (fdatasync, nop), or a negated errno.
	Res int32
}

// Err returns the operation's error, nil when Res is not negative.
func (c *Completion) Err() error {
	if c.Res >= 0 {
		return nil
	}
	return syscall.Errno(-c.Res)
}

// Kind names an implementation of Driver.
type Kind string

// The two implementations.
const (
	KindUring    Kind = "io_uring"
	KindPortable Kind = "portable"
)

// Driver submits operations and reports their completion. Every method is
// safe for concurrent use.
type Driver interface {
	// Kind reports which implementation this is.
	Kind() Kind

	// Submit queues cs, in order, as one batch, and returns once the batch
	// is handed to the kernel (or the worker pool). It never waits for the
	// IO itself. It blocks only while every slot of the completion table
	// is in use (backpressure), and returns ErrChainTooLong when one
	// linked chain is longer than the table, ErrClosed after Close.
	// Each Completion's Done is called once the operation has completed.
	Submit(cs []*Completion) error

	// Close waits for every submitted operation to complete, then releases
	// the driver's resources. Submit after Close returns ErrClosed.
	Close() error
}

// Blocking is a Driver that also carries out operations for a caller who
// waits for them, each in the way that measured fastest for that driver
// (for io_uring, see "The waiting path" in the package doc). WriteAt,
// ReadAt, Fdatasync and WriteAtSync, the functions, hand their work to a
// Blocking driver's methods of the same names, which keep their contracts:
// the results, errors, short-transfer handling and zero allocations are
// the same whichever way an operation goes, and after Close each returns
// ErrClosed. Every method is safe for concurrent use and must not be
// called from a Done callback.
type Blocking interface {
	Driver
	WriteAt(fd int, p []byte, off int64) (int, error)
	ReadAt(fd int, p []byte, off int64) (int, error)
	Fdatasync(fd int) error
	WriteAtSync(fd int, p []byte, off int64) (int, error)
}

// MaxIovecs bounds the buffers of one OpWritev.
const MaxIovecs = 64

// Errors a caller can test with errors.Is.
var (
	ErrClosed        = errors.New("felix/ring: driver closed")
	ErrChainTooLong  = errors.New("felix/ring: linked chain longer than the completion table")
	ErrTooManyIovecs = errors.New("felix/ring: writev with more than MaxIovecs buffers")
	// ErrUnavailable wraps the reason io_uring cannot be used here.
	ErrUnavailable = errors.New("felix/ring: io_uring unavailable")
	// ErrInvalid marks a Completion or Config the driver refuses before
	// queueing anything: an unknown Op, a negative offset, a transfer larger
	// than TransferBytesMax, an out-of-range Entries or Workers.
	ErrInvalid = errors.New("felix/ring: invalid operation or configuration")
	// ErrUnknownMode is returned by ParseMode and ModeFromEnv.
	ErrUnknownMode = errors.New("felix/ring: unknown IO mode")
)
