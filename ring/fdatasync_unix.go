//go:build unix && !linux && !darwin

package ring

import "golang.org/x/sys/unix"

func fdatasync(fd int) error { return unix.Fsync(fd) }
