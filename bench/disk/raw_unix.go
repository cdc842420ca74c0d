//go:build unix

package disk

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// writeAt is a bare pwrite loop: no poller, no os.File bookkeeping.
func writeAt(f *os.File, b []byte, off int64) error {
	fd := int(f.Fd())
	for len(b) > 0 {
		n, err := unix.Pwrite(fd, b, off)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return fmt.Errorf("felix/bench/disk: pwrite at %d: %w", off, err)
		case n == 0:
			return io.ErrShortWrite
		}
		b, off = b[n:], off+int64(n)
	}
	return nil
}
