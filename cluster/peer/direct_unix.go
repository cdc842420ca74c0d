//go:build unix

package peer

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// writeOnce writes b to the non-blocking socket fd once, never waiting: how
// much the socket took, and the error that failed the write (a full socket
// is not one: it took 0).
func writeOnce(fd uintptr, b []byte) (int, error) {
	for {
		n, err := unix.Write(int(fd), b)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
			return 0, nil
		case err != nil || n < 0:
			return 0, err
		}
		return n, nil
	}
}

// rawConnOf is the socket of nc for writes that never wait (a
// *net.TCPConn; nil for anything else, such as a test's wrapper).
func rawConnOf(nc any) syscall.RawConn {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return raw
}
