package vfs

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// preallocate reserves [off, off+length) with fallocate(FALLOC_FL_KEEP_SIZE),
// leaving the size and the contents alone. A file system without fallocate
// is treated as a platform without it: nothing is reserved, and nil.
func preallocate(fd int, off, length int64) error {
	for {
		err := unix.Fallocate(fd, unix.FALLOC_FL_KEEP_SIZE, off, length)
		switch err {
		case nil:
			return nil
		case syscall.EINTR:
			continue
		case syscall.EOPNOTSUPP:
			return nil
		}
		return err
	}
}
