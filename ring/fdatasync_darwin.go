//go:build darwin

package ring

import "golang.org/x/sys/unix"

// fdatasync on macOS is F_FULLFSYNC: plain fsync there does not ask the
// drive to flush its cache, so it does not make data durable.
func fdatasync(fd int) error {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_FULLFSYNC, 0)
	return err
}
