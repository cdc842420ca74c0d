package netio

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/panjf2000/gnet/v2"
)

// TLS connection bounds.
const (
	// tlsInboundBytes is a TLS connection's first inbound buffer; it grows
	// (doubling) only to hold a frame larger than it, which the frame limit
	// bounds, and shrinks back once that frame is handled.
	tlsInboundBytes = 64 << 10
	// tlsInboundKeepBytes is the largest inbound buffer kept between reads.
	tlsInboundKeepBytes = 1 << 20
	// tlsCloseFlushTimeout bounds how long a closing connection waits for
	// its last bytes (the ERROR that closes it) to reach a peer that may
	// not be reading.
	tlsCloseFlushTimeout = 5 * time.Second
)

// errTLSUnsupported answers the gnet.EventLoop methods a TLS connection
// does not need.
var errTLSUnsupported = errors.New("felix/netio: not supported on a TLS connection")

// tlsTransport serves one TLS connection in place of a gnet event loop: a
// reader goroutine reads, decrypts and runs the connection's traffic; a
// writer goroutine runs write callbacks and runnables, then encrypts and
// sends what was written. "The loop" is the loop mutex: traffic, callbacks
// and runnables hold it, so they run one at a time as on a gnet loop, and
// the connection's protocol logic (conn, outbox) is the gnet path's own.
//
// Lock order: loop, then the outbox's mu, then t.mu (a leaf). Nothing
// waits for loop while holding t.mu, and the socket is never touched under
// either lock.
type tlsTransport struct {
	nc     net.Conn // the *tls.Conn
	raw    net.Conn // the TCP connection under it
	remote net.Addr
	loop   sync.Mutex

	// the reader goroutine's (traffic runs on it)
	in   []byte // received, in[rpos:] not yet consumed
	rpos int

	writerQueue // the writer's work; its mu is the leaf lock below
	writerDone  chan struct{}
}

func newTLSTransport(nc *tls.Conn) *tlsTransport {
	t := &tlsTransport{nc: nc, raw: nc.NetConn(), remote: nc.RemoteAddr(), in: make([]byte, 0, tlsInboundBytes),
		writerDone: make(chan struct{})}
	t.init()
	return t
}

// serve runs the connection until it closes: the writer on a goroutine of
// its own, the reader on the caller's. The server's open and close
// handling run on the loop, as gnet's OnOpen and OnClose do.
func (t *tlsTransport) serve(s *Server) {
	go t.writeLoop()
	t.loop.Lock()
	c := s.openConn(t)
	t.loop.Unlock()
	err := t.readLoop(c)
	t.kill(err)
	<-t.writerDone
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		err = nil
	}
	t.loop.Lock()
	s.closeConn(c, err)
	t.loop.Unlock()
}

// readLoop reads until the connection fails or closes, handing each read
// to the connection's traffic on the loop.
func (t *tlsTransport) readLoop(c *conn) error {
	for {
		t.makeRoom()
		n, err := t.nc.Read(t.in[len(t.in):cap(t.in)])
		t.in = t.in[:len(t.in)+n]
		if n > 0 {
			t.loop.Lock()
			c.traffic()
			t.loop.Unlock()
		}
		if err != nil {
			return err
		}
	}
}

// makeRoom moves the unconsumed bytes to the front and makes sure a read
// has room: a frame still arriving doubles the buffer when it fills it.
func (t *tlsTransport) makeRoom() {
	unread := len(t.in) - t.rpos
	if unread == 0 && cap(t.in) > tlsInboundKeepBytes {
		t.in, t.rpos = make([]byte, 0, tlsInboundBytes), 0
		return
	}
	if t.rpos > 0 {
		copy(t.in, t.in[t.rpos:])
		t.in, t.rpos = t.in[:unread], 0
	}
	if len(t.in) == cap(t.in) {
		grown := make([]byte, len(t.in), 2*cap(t.in))
		copy(grown, t.in)
		t.in = grown
	}
}

// InboundBuffered, Peek and Discard read t.in; on the reader, in traffic.
func (t *tlsTransport) InboundBuffered() int { return len(t.in) - t.rpos }

func (t *tlsTransport) Peek(n int) ([]byte, error) {
	avail := t.in[t.rpos:]
	if n > len(avail) {
		return avail, io.ErrShortBuffer
	}
	return avail[:n], nil
}

func (t *tlsTransport) Discard(n int) (int, error) {
	n = min(n, len(t.in)-t.rpos)
	t.rpos += n
	return n, nil
}

// Write copies b for the writer; it never blocks.
func (t *tlsTransport) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dead {
		return 0, t.deadErr
	}
	t.acceptLocked(b)
	return len(b), nil
}

// Close sends what was accepted (within tlsCloseFlushTimeout), then closes
// the socket; the reader then runs the server's close handling.
func (t *tlsTransport) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closing || t.dead {
		return nil
	}
	t.closing = true
	_ = t.nc.SetWriteDeadline(time.Now().Add(tlsCloseFlushTimeout))
	t.wake.Signal()
	return nil
}

// kill closes the socket at once (the TCP connection under TLS, so nothing
// waits for a peer), dropping what was not sent.
func (t *tlsTransport) kill(err error) {
	t.mu.Lock()
	if t.dead {
		t.mu.Unlock()
		return
	}
	if err == nil {
		err = net.ErrClosed
	}
	t.dead, t.deadErr = true, err
	t.wake.Signal()
	t.mu.Unlock()
	_ = t.raw.Close()
}

func (t *tlsTransport) RemoteAddr() net.Addr { return t.remote }

// EventLoop is the connection's pseudo-loop: Execute runs a runnable on it.
func (t *tlsTransport) EventLoop() gnet.EventLoop {
	return queueLoop{q: &t.writerQueue, unsupported: errTLSUnsupported}
}

// writeLoop is the writer goroutine: it takes what was accepted, runs the
// callbacks and runnables on the loop, and sends the bytes; until the
// connection dies, or closes with everything sent.
func (t *tlsTransport) writeLoop() {
	defer close(t.writerDone)
	for {
		buf, cbs, tasks, ok := t.take()
		if !ok {
			return
		}
		if len(cbs) > 0 || len(tasks) > 0 {
			t.runOnLoop(cbs, tasks)
		}
		if len(buf) > 0 {
			_, err := t.nc.Write(buf)
			t.outstanding.Add(-int64(len(buf)))
			if err != nil {
				t.kill(err)
				return
			}
		}
		t.giveBack(buf, cbs)
	}
}

// take waits for work and takes it all. It reports false when the writer
// is done: the connection died, or it is closing with nothing left to send
// (then it closes the socket).
func (t *tlsTransport) take() ([]byte, []gnet.AsyncCallback, []gnet.Runnable, bool) {
	t.mu.Lock()
	for !t.dead && !t.closing && t.idleLocked() {
		t.wake.Wait()
	}
	if t.dead {
		t.mu.Unlock()
		return nil, nil, nil, false
	}
	if t.closing && t.idleLocked() {
		t.mu.Unlock()
		_ = t.nc.Close() // close_notify, within the write deadline Close set
		t.kill(net.ErrClosed)
		return nil, nil, nil, false
	}
	buf, cbs, tasks := t.takeLocked()
	t.mu.Unlock()
	return buf, cbs, tasks, true
}

func (t *tlsTransport) runOnLoop(cbs []gnet.AsyncCallback, tasks []gnet.Runnable) {
	t.loop.Lock()
	defer t.loop.Unlock()
	runTaken(cbs, tasks)
}
