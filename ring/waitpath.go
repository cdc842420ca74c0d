package ring

import (
	"runtime"
	"sync/atomic"
)

// waitPath is the waiting path (Blocking) both drivers share: see "The
// waiting path" in doc.go for which operation goes where and why. A driver
// embeds it, points sub at itself and sets closing in Close; the methods
// below then make the driver a Blocking one. Direct operations run with
// the system calls of direct_unix.go or direct_windows.go; the rest go
// through sub.Submit and a wait (the ring, or the worker pool).
type waitPath struct {
	sub Driver // the driver itself: where operations past the limit go

	// viaSubmit (the ringWait test hook) sends every waiting operation
	// through sub, as when many durability operations are in progress.
	viaSubmit bool

	// closing is set by Close for the methods that never reach Submit;
	// durable counts the waiting durability operations in progress, of
	// which up to directMax run on their callers' threads.
	closing   atomic.Bool
	durable   atomic.Int32
	directMax int32
}

func (w *waitPath) init(sub Driver, h *hooks) {
	w.sub = sub
	w.viaSubmit = h.ringWait
	w.directMax = directDurableMax(h)
}

// WriteAt writes p on the caller's thread. A buffered write is a copy into
// the page cache that costs less than handing it to another thread (an
// io-wq worker, a pool goroutine) and waking the caller afterwards.
func (w *waitPath) WriteAt(fd int, p []byte, off int64) (int, error) {
	if w.viaSubmit {
		return writeAtSubmit(w.sub, fd, p, off)
	}
	if w.closing.Load() {
		return 0, ErrClosed
	}
	return pwriteAll(fd, p, off)
}

// ReadAt reads on the caller's thread: a cached read is a copy that the
// other thread would also do, behind a hand-off and a wake-up; an uncached
// one waits for the disk either way.
func (w *waitPath) ReadAt(fd int, p []byte, off int64) (int, error) {
	if w.viaSubmit {
		return readAtSubmit(w.sub, fd, p, off)
	}
	if w.closing.Load() {
		return 0, ErrClosed
	}
	return preadAll(fd, p, off)
}

// Fdatasync syncs on the caller's thread while at most directMax waiting
// durability operations of this driver are in progress, this one
// included, and through Submit (a hand-off and a wait) past that.
func (w *waitPath) Fdatasync(fd int) error {
	if w.closing.Load() {
		return ErrClosed
	}
	direct := w.enterDurable()
	defer w.durable.Add(-1)
	if !direct {
		return fdatasyncSubmit(w.sub, fd)
	}
	return fdatasyncRetry(fd)
}

// WriteAtSync writes p and syncs on the caller's thread under the same
// limit as Fdatasync, and past it as a write linked to an fdatasync
// through Submit.
func (w *waitPath) WriteAtSync(fd int, p []byte, off int64) (int, error) {
	if w.closing.Load() {
		return 0, ErrClosed
	}
	direct := w.enterDurable()
	defer w.durable.Add(-1)
	if !direct {
		return writeAtSyncSubmit(w.sub, fd, p, off)
	}
	n, err := pwriteAll(fd, p, off)
	if err != nil {
		return n, err
	}
	return n, fdatasyncRetry(fd)
}

// enterDurable counts a waiting durability operation in and reports
// whether it is to run on the caller's thread: only while at most
// directMax are in progress, this one included.
func (w *waitPath) enterDurable() (direct bool) {
	return w.durable.Add(1) <= w.directMax
}

// directDurableMax is GOMAXPROCS: a durability operation on its caller's
// thread holds a P for as long as the disk takes (the runtime takes it
// back only after 20us or more, and only when other goroutines wait for
// it), so once there is one per P the next would wait for a processor, and
// goes through Submit instead, whose waiters give theirs back at once.
// The ringWait test hook makes it 0.
func directDurableMax(h *hooks) int32 {
	if h.ringWait {
		return 0
	}
	return int32(runtime.GOMAXPROCS(0))
}
