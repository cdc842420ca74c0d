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
	w := getScratch()
	defer putScratch(w)
	total := 0
	for total < len(p) {
		at := off + int64(total)
		n, err := w.transfer(windows.Handle(fd), chunk(p, total), at, true)
		total += n
		switch {
		case err != nil:
			return total, errnoError(OpWrite, at, err)
		case n == 0:
			return total, io.ErrShortWrite
		}
	}
	return total, nil
}

// preadAll is ReadAt: len(p) bytes, or fewer with an error, io.EOF at the
// end of the file.
func preadAll(fd int, p []byte, off int64) (int, error) {
	w := getScratch()
	defer putScratch(w)
	total := 0
	for total < len(p) {
		at := off + int64(total)
		n, err := w.transfer(windows.Handle(fd), chunk(p, total), at, false)
		total += n
		switch {
		case err != nil:
			return total, errnoError(OpRead, at, err)
		case n == 0:
			return total, io.EOF
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
