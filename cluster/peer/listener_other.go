//go:build !linux

package peer

import (
	"net"

	"github.com/panjf2000/gnet/v2"
)

// listenerHold is Linux's alone (listener_linux.go): elsewhere the engine
// is stopped directly, and Addr is the configured address (with port 0,
// the port is not known).
type listenerHold struct{}

func holdListener(gnet.Engine) listenerHold { return listenerHold{} }

func (listenerHold) addr(configured string) net.Addr {
	a, _ := net.ResolveTCPAddr("tcp", configured)
	return a
}

func (listenerHold) shut() bool { return false }
func (listenerHold) release()   {}
