//go:build windows

package netio

import "github.com/panjf2000/gnet/v2"

// socketFD is -1: on Windows every write goes through gnet.
func socketFD(gnet.Conn) int { return -1 }

func writeFD(int, []byte) int { return 0 }
