package peer

import (
	"net"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"
)

// listenerHold is a duplicate of gnet's listening socket, taken in OnBoot,
// so that stop can shut the socket without calling into gnet while gnet
// closes its own descriptor. Stopping gnet alone races: its reactor could
// accept a connection and hand it to a loop that had already exited,
// which nobody then served or closed. shutdown(2) takes the socket out of
// LISTEN first; gnet's reactor fails its next accept and stops the engine
// itself. (netio's listener does the same, for the same reason.)
type listenerHold struct{ fd int }

func holdListener(eng gnet.Engine) listenerHold {
	fd, err := eng.Dup()
	if err != nil {
		return listenerHold{fd: -1}
	}
	return listenerHold{fd: fd}
}

// addr is the address the socket is bound to, or the configured one.
func (h listenerHold) addr(configured string) net.Addr {
	if h.fd >= 0 {
		if sa, err := unix.Getsockname(h.fd); err == nil {
			switch a := sa.(type) {
			case *unix.SockaddrInet4:
				return &net.TCPAddr{IP: net.IP(a.Addr[:]).To16(), Port: a.Port}
			case *unix.SockaddrInet6:
				return &net.TCPAddr{IP: net.IP(a.Addr[:]), Port: a.Port}
			}
		}
	}
	a, _ := net.ResolveTCPAddr("tcp", configured)
	return a
}

// shut stops the socket from taking connections; false when it could not.
func (h listenerHold) shut() bool {
	return h.fd >= 0 && unix.Shutdown(h.fd, unix.SHUT_RD) == nil
}

// release closes the duplicate, once gnet has stopped.
func (h listenerHold) release() {
	if h.fd >= 0 {
		_ = unix.Close(h.fd)
	}
}
