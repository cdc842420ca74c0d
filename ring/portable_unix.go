//go:build unix

package ring

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// worker is one goroutine of the portable pool and its scratch.
type worker struct {
	chain []*Completion
	iov   iovScratch
}

func newWorker(chainMax int) *worker {
	return &worker{chain: make([]*Completion, 0, chainMax)}
}

func (w *worker) close() {}

// run performs c with one system call (retried on EINTR) and returns what
// the kernel would put in the CQE: bytes moved, 0, or a negated errno.
func (w *worker) run(c *Completion) int32 {
	for {
		n, err := w.syscall(c)
		if err != unix.EINTR {
			return result(n, err)
		}
	}
}

func (w *worker) syscall(c *Completion) (int, error) {
	switch c.Op {
	case OpRead:
		return unix.Pread(c.FD, c.Buf, c.Off)
	case OpWrite:
		return unix.Pwrite(c.FD, c.Buf, c.Off)
	case OpWritev:
		return w.iov.pwritev(c.FD, c.Bufs, c.Off)
	case OpFdatasync:
		return 0, fdatasync(c.FD)
	}
	return 0, nil
}

func result(n int, err error) int32 {
	if err == nil {
		return int32(n)
	}
	if errno, ok := err.(syscall.Errno); ok {
		return -int32(errno)
	}
	return -int32(unix.EIO)
}
