//go:build !unix

package peer

import "syscall"

// Writes that never wait are for unix sockets; elsewhere every write is
// the waiting writer's (a link's flusher, a served connection's writer).
func writeOnce(uintptr, []byte) (int, error) { return 0, nil }

func rawConnOf(any) syscall.RawConn { return nil }
