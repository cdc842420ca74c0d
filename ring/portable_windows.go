//go:build windows

package ring

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// worker is one goroutine of the portable pool and its scratch. On Windows
// a Completion's FD holds a file HANDLE; the offset travels in an
// OVERLAPPED, so concurrent workers never share a file position.
type worker struct {
	chain []*Completion
	ov    windows.Overlapped
	event windows.Handle // signals completion when the handle is overlapped
}

func newWorker(chainMax int) *worker {
	w := &worker{chain: make([]*Completion, 0, chainMax)}
	w.event, _ = windows.CreateEvent(nil, 1, 0, nil)
	return w
}

func (w *worker) close() {
	if w.event != 0 {
		_ = windows.CloseHandle(w.event)
	}
}

// run performs c and returns what the kernel would put in a CQE: bytes
// moved, 0, or a negated error code.
func (w *worker) run(c *Completion) int32 {
	h := windows.Handle(c.FD)
	switch c.Op {
	case OpRead:
		n, err := w.transfer(h, c.Buf, c.Off, false)
		return result(n, err)
	case OpWrite:
		n, err := w.transfer(h, c.Buf, c.Off, true)
		return result(n, err)
	case OpWritev:
		return w.writev(h, c.Bufs, c.Off)
	case OpFdatasync:
		return result(0, windows.FlushFileBuffers(h))
	}
	return 0
}

// writev writes bufs one after another and stops at the first short write,
// like a short pwritev.
func (w *worker) writev(h windows.Handle, bufs [][]byte, off int64) int32 {
	total := 0
	for _, b := range bufs {
		n, err := w.transfer(h, b, off+int64(total), true)
		total += n
		if err != nil && total == 0 {
			return result(0, err)
		}
		if err != nil || n < len(b) {
			break
		}
	}
	return int32(total)
}

// transfer is one ReadFile or WriteFile at off, waiting for it when the
// handle was opened for overlapped IO. Reading at end of file is 0 bytes.
func (w *worker) transfer(h windows.Handle, b []byte, off int64, write bool) (int, error) {
	w.ov = windows.Overlapped{Offset: uint32(off), OffsetHigh: uint32(off >> 32), HEvent: w.event}
	var n uint32
	var err error
	if write {
		err = windows.WriteFile(h, b, &n, &w.ov)
	} else {
		err = windows.ReadFile(h, b, &n, &w.ov)
	}
	if err == windows.ERROR_IO_PENDING {
		err = windows.GetOverlappedResult(h, &w.ov, &n, true)
	}
	if err == windows.ERROR_HANDLE_EOF && !write {
		err = nil
	}
	return int(n), err
}

func result(n int, err error) int32 {
	if err == nil {
		return int32(n)
	}
	if errno, ok := err.(syscall.Errno); ok {
		return -int32(errno)
	}
	return -int32(windows.ERROR_GEN_FAILURE)
}
