//go:build !linux

package netio

import "github.com/panjf2000/gnet/v2"

// listenerHold is Linux's alone (listener_shut_linux.go): elsewhere
// shutdown(2) does not stop a listening socket, and Stop stops the engine
// directly.
type listenerHold struct{}

func holdListener(gnet.Engine) listenerHold { return listenerHold{} }
func (listenerHold) shut() bool             { return false }
func (listenerHold) release()               {}
