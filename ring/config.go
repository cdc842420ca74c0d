package ring

import (
	"fmt"
	"log/slog"
	"time"
)

// Limits on a driver's size. Frozen only in the sense that changing them
// changes memory use: a slot costs one iovec array (MaxIovecs*16 bytes of
// mmap'd memory) and a few pointers.
const (
	entriesDefault = 256
	entriesMax     = 32768 // IORING_MAX_ENTRIES: the kernel's cap on the SQ
	workersDefault = 4
	workersMax     = 1024
	reapSpinMax    = time.Millisecond

	// TransferBytesMax bounds one read, write or writev, so that Res (an
	// int32) and a Windows DWORD always hold the byte count. The
	// synchronous helpers split larger transfers.
	TransferBytesMax = 1 << 30
)

// Config chooses and sizes a Driver. The zero value is valid: ModeAuto, 256
// entries, 4 portable workers, slog.Default().
type Config struct {
	Mode Mode
	// Entries sizes the completion table: at most this many operations are
	// in flight at once, and no linked chain may be longer. For io_uring it
	// is also the SQ size (the kernel rounds it up to a power of two).
	// Default 256, at most 32768.
	Entries uint32
	// Workers is the portable driver's goroutine pool. Default 4, at most 1024.
	Workers int
	// Logger receives the warning when ModeAuto falls back. Default slog.Default().
	Logger *slog.Logger
	// ReapSpin lets the io_uring reaper poll the CQ ring for up to this
	// long, yielding the processor between looks, before it sleeps in the
	// kernel: CPU traded for latency. Waking a thread asleep in
	// io_uring_enter is the largest cost of a short operation (measured in
	// docs/benchmarks.md, "IO path: io_uring vs portable", with what polling
	// gained and cost there). It matters only for Submit and
	// for durable waits past the direct limit: page-cache writes and
	// reads, and most durability operations, never touch the ring (see
	// "The waiting path" in the package doc). 0, the default, sleeps at
	// once. At most 1ms. The portable driver ignores it.
	ReapSpin time.Duration

	// hooks lets tests inside the package inject faults and observe waits.
	// A pointer keeps Config comparable; nil means none.
	hooks *hooks
}

// noHooks is the real thing everywhere; drivers only read their hooks.
var noHooks hooks

// hooks are test seams; their zero value means "the real thing".
type hooks struct {
	enter     enterFunc     // io_uring_enter; nil: the raw syscall
	sqEntries uint32        // io_uring SQ size when not 0 (default: Entries)
	cqEntries uint32        // IORING_SETUP_CQSIZE when not 0
	reapSpin  time.Duration // overrides ReapSpin, past its limit, when not 0
	slotWait  func()        // called each time a Submit blocks for room
	closeWait func()        // called when Close starts waiting for in-flight work

	// ringWait sends every waiting operation (Blocking) through Submit:
	// the ring, or the portable driver's workers, as when many durability
	// operations are in progress.
	ringWait bool
}

// enterFunc has the shape of io_uring_enter(2) without the signal mask.
type enterFunc func(fd int, toSubmit, minComplete, flags uint32) (int, error)

func (c Config) withDefaults() (Config, error) {
	if c.Entries == 0 {
		c.Entries = entriesDefault
	}
	if c.Entries > entriesMax {
		return c, fmt.Errorf("%w: Config.Entries %d is above %d", ErrInvalid, c.Entries, entriesMax)
	}
	if c.Workers == 0 {
		c.Workers = workersDefault
	}
	if c.Workers < 0 || c.Workers > workersMax {
		return c, fmt.Errorf("%w: Config.Workers %d is outside 1..%d", ErrInvalid, c.Workers, workersMax)
	}
	if c.ReapSpin < 0 || c.ReapSpin > reapSpinMax {
		return c, fmt.Errorf("%w: Config.ReapSpin %v is outside 0..%v", ErrInvalid, c.ReapSpin, reapSpinMax)
	}
	if c.hooks == nil {
		c.hooks = &noHooks
	}
	if c.hooks.reapSpin != 0 {
		c.ReapSpin = c.hooks.reapSpin
	}
	if c.Mode > ModePortable {
		return c, fmt.Errorf("%w: %v", ErrUnknownMode, c.Mode)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}
