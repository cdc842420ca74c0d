package peer

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// server is the listening side of a TCP transport: a listener on
// Config.Addr, a goroutine accepting on it, and for every connection a
// reader (serverConn.serve), the only reader of its socket, which runs the
// Handler, and a writer for the answers a full socket leaves waiting.
//
// Goroutines, not a gnet event loop: a broker has a few peers, and a gnet
// loop holds its Go processor while it waits in epoll_wait (netio's doc,
// "Event loops and processors"), while a reader parked on Go's netpoller
// holds none. On 2 vCPUs, with the client listener's loop and this one
// both waiting, a forwarded publish's answer waited up to a hundred
// microseconds for the runtime to take a processor back from one of them.
type server struct {
	t    *TCP
	ln   net.Listener
	addr net.Addr

	mu     sync.Mutex // guards conns, closed
	conns  map[*serverConn]struct{}
	closed bool
	wg     sync.WaitGroup // the acceptor, readers and writers
}

// serverReadBufferBytes is a served connection's read buffer: a frame
// that arrives whole in one read is handled where it lies.
const serverReadBufferBytes = 256 << 10

func newServer(t *TCP) *server {
	return &server{t: t, conns: map[*serverConn]struct{}{}}
}

// start binds the listener and starts accepting.
func (s *server) start() error {
	ln, err := net.Listen("tcp", s.t.cfg.Addr)
	if err != nil {
		return fmt.Errorf("felix/peer: listening on %s: %w", s.t.cfg.Addr, err)
	}
	s.ln, s.addr = ln, ln.Addr()
	s.wg.Add(1)
	go s.accept()
	return nil
}

// accept serves every connection the listener takes until it is closed;
// a failed accept (out of descriptors) is retried after a pause that
// doubles up to acceptPauseMax.
func (s *server) accept() {
	defer s.wg.Done()
	var pause time.Duration
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			pause = min(max(2*pause, acceptPauseMin), acceptPauseMax)
			s.t.cfg.Logger.Debug("peer accept failed", "err", err, "retry_in", pause)
			select {
			case <-time.After(pause):
			case <-s.t.done: // Close: the listener is closed next
			}
			continue
		}
		pause = 0
		s.open(nc)
	}
}

// Bounds of the pause after a failed accept.
const (
	acceptPauseMin = 5 * time.Millisecond
	acceptPauseMax = time.Second
)

// open starts serving nc, unless stop has begun.
func (s *server) open(nc net.Conn) {
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	sc := newServerConn(s.t, newSock(nc, s.t.cfg.WriteTimeout))
	sc.onClose = func() { s.forget(sc) }
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = nc.Close()
		return
	}
	s.conns[sc] = struct{}{}
	s.wg.Add(2)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		sc.out.writer()
	}()
	go func() {
		defer s.wg.Done()
		sc.serve()
	}()
}

// forget drops a closed connection.
func (s *server) forget(sc *serverConn) {
	s.mu.Lock()
	delete(s.conns, sc)
	s.mu.Unlock()
}

// stop closes the listener, then every connection, and waits for their
// goroutines: nothing accepted is left unserved.
func (s *server) stop() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	_ = s.ln.Close()
	s.mu.Lock()
	conns := make([]*serverConn, 0, len(s.conns))
	for sc := range s.conns {
		conns = append(conns, sc)
	}
	s.mu.Unlock()
	for _, sc := range conns {
		sc.close()
	}
	s.wg.Wait()
}
