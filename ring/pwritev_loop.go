//go:build unix && !linux && !darwin && !openbsd && !illumos

package ring

import "golang.org/x/sys/unix"

// iovScratch is empty here: x/sys has no pwritev for this system, so the
// buffers are written one pwrite at a time, stopping at the first short one.
type iovScratch struct{}

func (iovScratch) pwritev(fd int, bufs [][]byte, off int64) (int, error) {
	total := 0
	for _, b := range bufs {
		n, err := unix.Pwrite(fd, b, off+int64(total))
		total += max(n, 0)
		if err != nil && total == 0 {
			return 0, err
		}
		if err != nil || n < len(b) {
			break
		}
	}
	return total, nil
}
