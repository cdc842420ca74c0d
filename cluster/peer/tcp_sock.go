package peer

import (
	"net"
	"syscall"
	"time"
)

// sock is a peer connection's socket, dialled or accepted, as both sides
// write to it: a write that may wait (write, bounded by WriteTimeout) for
// the goroutines that may block, and one that never waits (tryWrite) for
// the callers that must not: a Send on an event loop, an answer given by a
// log's committer. Reads are net.Conn's, on the connection's reader.
type sock struct {
	nc           net.Conn
	writeTimeout time.Duration

	// raw is the socket for tryWrite, nil when nc has none (a test's
	// wrapper; not unix): tryWrite then takes nothing and the waiting
	// writer does it all. rawFn is rawWrite bound once; pend, took and
	// failed are its argument and results. The caller of tryWrite holds
	// its connection's only write (a flag under the connection's lock),
	// so they need no lock of their own.
	raw    syscall.RawConn
	rawFn  func(fd uintptr) bool
	pend   []byte
	took   int
	failed error
}

func newSock(nc net.Conn, writeTimeout time.Duration) *sock {
	s := &sock{nc: nc, writeTimeout: writeTimeout, raw: rawConnOf(nc)}
	s.rawFn = s.rawWrite
	return s
}

func (s *sock) Read(b []byte) (int, error) { return s.nc.Read(b) }

func (s *sock) SetReadDeadline(t time.Time) error { return s.nc.SetReadDeadline(t) }

// write writes b whole, waiting at most WriteTimeout for the peer to
// read; when it fails, n is how much the socket took.
func (s *sock) write(b []byte) (n int, err error) {
	if err := s.nc.SetWriteDeadline(time.Now().Add(s.writeTimeout)); err != nil {
		return 0, err
	}
	return s.nc.Write(b)
}

// tryWrite writes b to the socket once without waiting, on the caller's
// goroutine: how much of b the socket took (all of it unless its buffer is
// full, 0 without raw), and the error that failed the write.
func (s *sock) tryWrite(b []byte) (int, error) {
	if s.raw == nil {
		return 0, nil
	}
	s.pend = b
	err := s.raw.Write(s.rawFn)
	n, failed := s.took, s.failed
	s.pend, s.took, s.failed = nil, 0, nil
	if err != nil { // the connection is closed
		return n, err
	}
	return n, failed
}

// rawWrite is tryWrite's one write; true: never wait for the socket.
func (s *sock) rawWrite(fd uintptr) bool {
	s.took, s.failed = writeOnce(fd, s.pend)
	return true
}

func (s *sock) close() { _ = s.nc.Close() }
