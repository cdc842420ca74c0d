//go:build darwin || openbsd || illumos

package ring

import "golang.org/x/sys/unix"

// iovScratch is empty here: x/sys's Pwritev builds the iovecs itself (on
// the stack for up to 8 buffers).
type iovScratch struct{}

func (iovScratch) pwritev(fd int, bufs [][]byte, off int64) (int, error) {
	return unix.Pwritev(fd, bufs, off)
}
