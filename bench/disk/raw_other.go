//go:build !unix

package disk

import (
	"fmt"
	"os"
)

// The portable bare path, for Windows: os.File's WriteAt and Sync
// (FlushFileBuffers).
func writeAt(f *os.File, b []byte, off int64) error {
	if _, err := f.WriteAt(b, off); err != nil {
		return fmt.Errorf("felix/bench/disk: write at %d: %w", off, err)
	}
	return nil
}

func datasync(f *os.File) error {
	if err := f.Sync(); err != nil {
		return fmt.Errorf("felix/bench/disk: sync: %w", err)
	}
	return nil
}
