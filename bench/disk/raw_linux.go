package disk

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

func datasync(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("felix/bench/disk: fdatasync: %w", err)
		}
		return nil
	}
}
