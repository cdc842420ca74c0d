//go:build linux

package ring

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// iovScratch holds a worker's iovec array, so pwritev allocates nothing
// (x/sys's Pwritev allocates past 8 buffers).
type iovScratch struct {
	vs [MaxIovecs]unix.Iovec
}

// longBits is the width of the kernel's unsigned long.
const longBits = 32 << (^uintptr(0) >> 63)

func (s *iovScratch) pwritev(fd int, bufs [][]byte, off int64) (int, error) {
	vs := s.vs[:len(bufs)]
	for i, b := range bufs {
		vs[i] = unix.Iovec{}
		if len(b) > 0 {
			vs[i].Base = &b[0]
			vs[i].SetLen(len(b))
		}
	}
	var p unsafe.Pointer
	if len(vs) > 0 {
		p = unsafe.Pointer(&vs[0])
	}
	// pwritev(fd, vec, vlen, pos_l, pos_h): the offset split in two longs.
	n, _, errno := unix.Syscall6(unix.SYS_PWRITEV, uintptr(fd), uintptr(p), uintptr(len(vs)),
		uintptr(off), uintptr(uint64(off)>>(longBits-1)>>1), 0)
	clear(vs) // drop the references to the caller's buffers
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
