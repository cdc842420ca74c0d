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
	total := 0
	for total < len(p) {
		at := off + int64(total)
		n, err := unix.Pwrite(fd, chunk(p, total), at)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return total, errnoError(OpWrite, at, err)
		case n == 0:
			return total, io.ErrShortWrite
		}
		total += n
	}
	return total, nil
}

// preadAll is ReadAt with system calls: len(p) bytes, or fewer with an
// error, io.EOF at the end of the file.
func preadAll(fd int, p []byte, off int64) (int, error) {
	total := 0
	for total < len(p) {
		at := off + int64(total)
		n, err := unix.Pread(fd, chunk(p, total), at)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return total, errnoError(OpRead, at, err)
		case n == 0:
			return total, io.EOF
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
