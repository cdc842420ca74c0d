//go:build windows

package ring

import (
	"io"

	"golang.org/x/sys/windows"
)

// The waiting path's direct operations (waitpath.go) on Windows: ReadFile,
// WriteFile and FlushFileBuffers on the caller's thread. A transfer needs
// an OVERLAPPED (the offset, and an event when the handle is overlapped)
// that must not move while the IO is pending, so each call borrows a
// worker's scratch from a bounded free list instead of using its stack.

// directScratchMax bounds the idle scratches kept for reuse.
const directScratchMax = 64

var idleScratch = make(chan *worker, directScratchMax)

func getScratch() *worker {
	select {
	case w := <-idleScratch:
		return w
	default:
	}
	return newWorker(0)
}

func putScratch(w *worker) {
	select {
	case idleScratch <- w:
	default:
		w.close()
	}
}

// pwriteAll is WriteAt: all of p, going on after short writes,
// io.ErrShortWrite when the file takes nothing.
func pwriteAll(fd int, p []byte, off int64) (int, error) {
	return transferAll(fd, p, off, true)
}

// preadAll is ReadAt: len(p) bytes, or fewer with an error, io.EOF at the
// end of the file.
func preadAll(fd int, p []byte, off int64) (int, error) {
	return transferAll(fd, p, off, false)
}

// transferAll writes (write) or reads all of p at off with a borrowed
// scratch, going on after short transfers; a transfer of nothing ends it
// with io.ErrShortWrite or io.EOF.
func transferAll(fd int, p []byte, off int64, write bool) (int, error) {
	op, nothing := OpRead, io.EOF
	if write {
		op, nothing = OpWrite, io.ErrShortWrite
	}
	w := getScratch()
	defer putScratch(w)
	total := 0
	for total < len(p) {
		at := off + int64(total)
		n, err := w.transfer(windows.Handle(fd), chunk(p, total), at, write)
		total += n
		switch {
		case err != nil:
			return total, errnoError(op, at, err)
		case n == 0:
			return total, nothing
		}
	}
	return total, nil
}

// fdatasyncRetry is FlushFileBuffers.
func fdatasyncRetry(fd int) error {
	if err := windows.FlushFileBuffers(windows.Handle(fd)); err != nil {
		return errnoError(OpFdatasync, 0, err)
	}
	return nil
}
