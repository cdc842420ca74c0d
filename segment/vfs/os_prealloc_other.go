//go:build !linux

package vfs

// preallocate is a no-op where the platform has no fallocate with
// KEEP_SIZE; the space is then allocated as the file is written.
func preallocate(fd int, off, length int64) error { return nil }
