//go:build unix && !linux && !darwin

package disk

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

func datasync(f *os.File) error {
	if err := unix.Fsync(int(f.Fd())); err != nil {
		return fmt.Errorf("felix/bench/disk: fsync: %w", err)
	}
	return nil
}
