//go:build unix

package peer

import (
	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"
)

// socketFD is the descriptor a direct write may use.
func socketFD(gc gnet.Conn) int { return gc.Fd() }

// writeFD writes b to the non-blocking socket fd once and returns how much
// it took (0 when it took nothing, would block, or failed).
func writeFD(fd int, b []byte) int {
	n, err := unix.Write(fd, b)
	if err != nil || n < 0 {
		return 0
	}
	return n
}
