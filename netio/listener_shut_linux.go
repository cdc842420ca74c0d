package netio

import (
	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"
)

// listenerHold is a duplicate of gnet's listening socket, taken in OnBoot
// (on gnet's goroutine, before Start returns) so that Stop can shut the
// socket without calling into gnet while gnet closes its own descriptor.
//
// Stopping gnet alone races: its main reactor could accept a connection
// and hand it to an event loop that had already exited, which nobody then
// served or closed (the client waited out its handshake timeout). shutdown(2)
// takes the socket out of LISTEN first: the connections waiting in its
// backlog and any that arrive later are reset, gnet's reactor fails its
// next accept, after every connection it accepted was queued to a loop, and
// stops the engine itself.
type listenerHold struct{ fd int }

func holdListener(eng gnet.Engine) listenerHold {
	fd, err := eng.Dup()
	if err != nil {
		return listenerHold{fd: -1}
	}
	return listenerHold{fd: fd}
}

// shut stops the socket from taking connections; false when it could not.
func (h listenerHold) shut() bool {
	return h.fd >= 0 && unix.Shutdown(h.fd, unix.SHUT_RD) == nil
}

// release closes the duplicate, once gnet has stopped.
func (h listenerHold) release() {
	if h.fd >= 0 {
		unix.Close(h.fd)
	}
}
