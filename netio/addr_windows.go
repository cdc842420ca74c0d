//go:build windows

package netio

import (
	"net"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/windows"
)

// boundAddr reads the listener's address from the socket, so a port of 0
// reports the port it got.
func boundAddr(eng gnet.Engine) (net.Addr, error) {
	fd, err := eng.Dup()
	if err != nil {
		return nil, err
	}
	h := windows.Handle(fd)
	defer windows.Closesocket(h)
	sa, err := windows.Getsockname(h)
	if err != nil {
		return nil, err
	}
	switch a := sa.(type) {
	case *windows.SockaddrInet4:
		return &net.TCPAddr{IP: net.IP(a.Addr[:]).To16(), Port: a.Port}, nil
	case *windows.SockaddrInet6:
		return &net.TCPAddr{IP: net.IP(a.Addr[:]), Port: a.Port}, nil
	}
	return nil, errUnknownSockaddr
}
