package shardlog

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The backoff between a Healer's attempts to reopen a log that failed for
// lack of space: it doubles from the first to the last, so a disk that
// stays full costs one probe every HealBackoffMax, and a log serves again
// within about that long of space coming back.
const (
	HealBackoffMin = 100 * time.Millisecond
	HealBackoffMax = 10 * time.Second
)

// Healer keeps its owner's log serving across a failure for lack of space,
// without a restart. At the first failure for ENOSPC reported to it
// (Failed) it starts a goroutine that retries Reopen with backoff until a
// reopen succeeds or the Healer is closed, then hands the reopened log to
// the owner's TakeFunc, which puts it in place of the failed one. Nobody
// waits for it: the failed log refuses appends at once meanwhile, and reads
// go on. A failure with another cause (EIO) is left alone: the disk is
// suspect, and a restart is the operator's call.
//
// The owner reaches its log through Log (or Read, which follows a swap),
// reports every append refused or failed (Failed), holds Lock around what
// must not run on a log while it is replaced (retention, compaction,
// Truncate), and closes the log through Close. Lock order: Lock, then
// whatever the TakeFunc takes. Safe for concurrent use.
type Healer struct {
	cur    atomic.Pointer[Log]
	take   TakeFunc
	logger *slog.Logger

	// reopenMu is held across a reopen, and by Lock.
	reopenMu sync.Mutex

	// mu guards the healing's start and closed; never held across IO, so
	// an appender that reports a failure never waits on a disk.
	mu      sync.Mutex
	healing atomic.Bool // a goroutine is reopening the current log
	closed  bool
	stop    chan struct{} // closed by Close
	done    sync.WaitGroup
}

// TakeFunc puts n, the failed log old reopened from disk, in place of old:
// it brings what the owner derives from the log in line with n (from the
// records n holds past old.End(), Recovered: appends whose outcome was
// unknown and whose bytes had reached the file; or rebuilt from n whole),
// and calls Healer.Swap(n) once, at the moment n takes old's place for the
// owner's readers. Or it returns an error without calling Swap: then n is
// closed, and the reopen tried again after the next backoff. It runs on the
// Healer's goroutine, under Lock; old is closed after it returns.
type TakeFunc func(old, n *Log) error

// NewHealer returns a Healer serving l. logger nil: l's own.
func NewHealer(l *Log, take TakeFunc, logger *slog.Logger) *Healer {
	if logger == nil {
		logger = l.opts.Logger
	}
	h := &Healer{take: take, logger: logger, stop: make(chan struct{})}
	h.cur.Store(l)
	return h
}

// Log is the log the owner serves from now.
func (h *Healer) Log() *Log { return h.cur.Load() }

// Read reads the current log; a read that lands on a log just replaced
// (its files released) goes again, on the new one.
func (h *Healer) Read(from int64, maxBytes int, dst []byte) ([]byte, int64, error) {
	for {
		l := h.cur.Load()
		out, next, err := l.Read(from, maxBytes, dst)
		if errors.Is(err, ErrClosed) && h.cur.Load() != l {
			continue
		}
		return out, next, err
	}
}

// Failed reports that an append to l was refused, or failed, with err. When
// l is still the current log and failed for lack of space, the healing
// starts, once. It never waits on a disk.
func (h *Healer) Failed(l *Log, err error) {
	if !errors.Is(err, ErrPoisoned) || !errors.Is(err, syscall.ENOSPC) {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.healing.Load() || h.closed || h.cur.Load() != l {
		return
	}
	h.healing.Store(true)
	h.done.Add(1)
	go h.heal()
}

// Refusal is nil unless the current log failed for lack of space and waits
// to be reopened; then it is what an append to it is told (matching
// ErrNoSpace), so the owner can refuse work that would need the log before
// doing any of it.
func (h *Healer) Refusal() error {
	if !h.healing.Load() {
		return nil
	}
	return h.cur.Load().poisonErr()
}

// Err is the current log's failure (what an append to it is told now,
// whatever the cause), or nil while it serves appends.
func (h *Healer) Err() error { return h.cur.Load().poisonErr() }

// Swap makes n the current log and lets a failure of it start a new
// healing; for the TakeFunc only.
func (h *Healer) Swap(n *Log) {
	h.mu.Lock()
	h.cur.Store(n)
	h.healing.Store(false)
	h.mu.Unlock()
}

// Lock keeps a reopen from starting, waiting for one in progress, until
// Unlock.
func (h *Healer) Lock() { h.reopenMu.Lock() }

// Unlock lets reopens go on.
func (h *Healer) Unlock() { h.reopenMu.Unlock() }

// Close stops the healing, waiting for a reopen in progress (so the
// caller must hold nothing the TakeFunc takes), and closes the current log.
func (h *Healer) Close() error {
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		close(h.stop)
	}
	h.mu.Unlock()
	h.done.Wait()
	h.Lock()
	defer h.Unlock()
	return h.cur.Load().Close()
}

// heal tries to reopen the log, waiting HealBackoffMin, then twice as long
// each time, up to HealBackoffMax, until it succeeds or the Healer closes.
func (h *Healer) heal() {
	defer h.done.Done()
	for delay := HealBackoffMin; ; delay = min(2*delay, HealBackoffMax) {
		t := time.NewTimer(delay)
		select {
		case <-h.stop:
			t.Stop()
			return
		case <-t.C:
		}
		if h.reopen() {
			return
		}
	}
}

// reopen has the owner take the failed log reopened in its place, and
// reports whether it did.
func (h *Healer) reopen() bool {
	h.Lock()
	defer h.Unlock()
	old := h.cur.Load()
	n, err := old.Reopen()
	switch {
	case errors.Is(err, ErrNoSpace):
		h.logger.Info("log still out of space; appends stay refused", "err", err)
		return false
	case err != nil:
		h.logger.Warn("could not reopen the failed log; will try again", "err", err)
		return false
	}
	if n.End() < old.End() {
		// Only a failed fdatasync can drop what a log acknowledged from
		// the page cache (None, Periodic); say so, it cannot be undone.
		h.logger.Error("the reopened log ends before what was acknowledged", "acknowledged_end", old.End(), "end", n.End())
	}
	if err := h.take(old, n); err != nil {
		h.logger.Warn("the reopened log was not taken in; will try again", "err", err)
		if cerr := n.Close(); cerr != nil {
			h.logger.Warn("closing the reopened log", "err", cerr)
		}
		return false
	}
	if h.cur.Load() != n {
		panic("felix/shardlog: broken invariant: a TakeFunc returned nil without swapping the reopened log in")
	}
	if err := old.Close(); err != nil {
		h.logger.Warn("closing the failed log", "err", err)
	}
	h.logger.Info("log reopened after running out of space; appends accepted again", "start", n.Start(), "end", n.End())
	return true
}

// recoveredReadBytes bounds one read of Recovered; there are at most the
// two write buffers' worth.
const recoveredReadBytes = 1 << 20

// Recovered returns the framed records n, old reopened, holds past old's
// end: appends whose outcome was unknown (told the poison, not its
// refusal) and whose bytes had reached the file. A TakeFunc hands them on
// as if n had just made them visible. On a read error it returns what it
// has, with the error.
func Recovered(old, n *Log) ([]byte, error) {
	var out []byte
	for from, to := old.End(), n.End(); from < to; {
		var next int64
		var err error
		out, next, err = n.Read(from, recoveredReadBytes, out)
		if err == nil && next <= from {
			err = fmt.Errorf("felix/shardlog: reading the recovered records: no progress at offset %d of [%d, %d)", from, old.End(), to)
		}
		if err != nil {
			return out, err
		}
		from = next
	}
	return out, nil
}
