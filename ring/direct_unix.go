//go:build unix

package ring

import (
	"io"

	"golang.org/x/sys/unix"
)

// The waiting path's direct operations (waitpath.go): system calls on the
// caller's thread, with the helpers' contracts.

// pwriteAll is WriteAt with system calls: all of p, going on after short
// writes, io.ErrShortWrite when the file takes nothing.
func pwriteAll(fd int, p []byte, off int64) (int, error) {
	return transferAll(fd, p, off, OpWrite, unix.Pwrite, io.ErrShortWrite)
}

// preadAll is ReadAt with system calls: len(p) bytes, or fewer with an
// error, io.EOF at the end of the file.
func preadAll(fd int, p []byte, off int64) (int, error) {
	return transferAll(fd, p, off, OpRead, unix.Pread, io.EOF)
}

// transferAll moves all of p at off with call (pwrite or pread), going on
// after short transfers and EINTR; a transfer of nothing ends it with
// nothing (io.ErrShortWrite, io.EOF).
func transferAll(fd int, p []byte, off int64, op Op, call func(int, []byte, int64) (int, error), nothing error) (int, error) {
	total := 0
	for total < len(p) {
		at := off + int64(total)
		n, err := call(fd, chunk(p, total), at)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return total, errnoError(op, at, err)
		case n == 0:
			return total, nothing
		}
		total += n
	}
	return total, nil
}

// fdatasyncRetry is fdatasync (F_FULLFSYNC on macOS, fsync on the other
// BSDs), retried on EINTR.
func fdatasyncRetry(fd int) error {
	for {
		err := fdatasync(fd)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return errnoError(OpFdatasync, 0, err)
		}
		return nil
	}
}
