//go:build windows

package datadir

import (
	"os"

	"golang.org/x/sys/windows"
)

var errWouldBlock = windows.ERROR_LOCK_VIOLATION

// lockedByte is the one byte the lock covers: past the pid, since Windows
// locks are mandatory and a second broker must still read the pid.
const lockedByte = 1 << 30

// lockFile takes an exclusive lock on lockedByte without waiting.
func lockFile(f *os.File) error {
	ol := windows.Overlapped{Offset: lockedByte}
	return windows.LockFileEx(windows.Handle(f.Fd()),
		windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
}

func unlockFile(f *os.File) error {
	ol := windows.Overlapped{Offset: lockedByte}
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}
