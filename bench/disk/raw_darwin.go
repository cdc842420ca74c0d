package disk

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// datasync is F_FULLFSYNC on macOS: plain fsync there does not flush the
// drive's cache, and the ring drivers use F_FULLFSYNC too.
func datasync(f *os.File) error {
	if _, err := unix.FcntlInt(f.Fd(), unix.F_FULLFSYNC, 0); err != nil {
		return fmt.Errorf("felix/bench/disk: F_FULLFSYNC: %w", err)
	}
	return nil
}
