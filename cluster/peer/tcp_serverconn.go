package peer

import (
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// servedSocket is what a served connection needs of its socket: a *sock,
// or a test's fake.
type servedSocket interface {
	io.Reader
	SetReadDeadline(t time.Time) error
	tryWrite(b []byte) (int, error)
	write(b []byte) (int, error)
	close()
}

// serverConn is one connection a peer dialled to this broker. The fields
// under "reader" are its reader goroutine's alone.
type serverConn struct {
	t       *TCP
	s       servedSocket
	out     outbox
	busy    atomic.Int64 // requests in service: handed over, not yet answered
	onClose func()       // the server forgets it
	once    sync.Once

	// reader
	reader    wire.Reader
	ses       session // set by the handshake
	helloDone bool
	refusing  bool // a fatal error was answered: read nothing more
}

func newServerConn(t *TCP, s servedSocket) *serverConn {
	sc := &serverConn{t: t, s: s, reader: wire.Reader{Limits: t.lim}}
	sc.out.init(s, answerBacklogBytesMax(t.me.frameBytesMax), sc.close)
	return sc
}

// serve is the connection's reader: it handles every frame the peer sends
// until the connection fails, the peer closes it, or a refusal ends it
// (the outbox closes the connection once the refusal is written). A
// connection that sends no whole PEER_HELLO within HandshakeTimeout is
// closed.
func (sc *serverConn) serve() {
	_ = sc.s.SetReadDeadline(time.Now().Add(sc.t.cfg.HandshakeTimeout))
	err := sc.readFrames(sc.s)
	if sc.refusing {
		return
	}
	sc.t.cfg.Logger.Debug("peer connection closed", "peer", sc.ses.peer, "err", err)
	sc.close()
}

// readFrames reads r until it fails or a refusal: every frame that lies
// whole in a read is handled where it lies, in the read buffer, and the
// answers given meanwhile leave in one write at the end of the read; the
// start of the next frame stays at the buffer's head for the next read.
// A frame is checked (its size against the limits, its type, PEER_HELLO
// first) as soon as its header is in, before its body is waited for, and
// the buffer grows for a larger frame only as its bytes arrive.
func (sc *serverConn) readFrames(r io.Reader) error {
	buf := make([]byte, serverReadBufferBytes)
	n := 0
	for {
		m, err := r.Read(buf[n:])
		if m > 0 {
			off, need := sc.traffic(buf[:n+m])
			if sc.refusing {
				return nil
			}
			n = copy(buf, buf[off:n+m])
			buf = fitServedBuf(buf, n, need)
		}
		if err != nil {
			return err
		}
	}
}

// traffic handles the whole frames at the start of b, then writes the
// answers given meanwhile in one go; off is where the unfinished rest
// starts, need what it still lacks.
func (sc *serverConn) traffic(b []byte) (off, need int) {
	sc.out.beginTraffic()
	off, need = sc.consume(b)
	sc.out.endTraffic()
	return off, need
}

// consume handles every whole frame at the start of b.
func (sc *serverConn) consume(b []byte) (off, need int) {
	for !sc.refusing {
		f, need, err := sc.reader.Next(b[off:])
		if !sc.admit(f, need, err, len(b)-off) {
			return off, need
		}
		sc.handle(f)
		off += f.Size()
	}
	return len(b), 0
}

// fitServedBuf is buf, or, when buf is full of a frame's start, one twice
// its size (the frame's whole size at most, declared by a header already
// checked): a peer that declares a large frame and sends little of it
// holds little. Once a large frame is done, a buffer of the usual size
// again.
func fitServedBuf(buf []byte, n, need int) []byte {
	switch {
	case n == len(buf) && need > 0:
		bigger := make([]byte, min(n+need, 2*len(buf)))
		copy(bigger, buf[:n])
		return bigger
	case len(buf) > readBufKeepBytes && n+need <= serverReadBufferBytes:
		smaller := make([]byte, serverReadBufferBytes)
		copy(smaller, buf[:n])
		return smaller
	}
	return buf
}

// admit reports whether the Reader found a whole frame to handle; a frame
// that can never be valid (or is not PEER_HELLO before the handshake) is
// refused here.
func (sc *serverConn) admit(f wire.Frame, need int, err error, have int) bool {
	switch {
	case err != nil:
		sc.refuse(f.RequestID, toWireError(err))
	case have >= wire.HeaderSize && !sc.helloDone && f.Type != wire.TypePeerHello:
		sc.refuse(f.RequestID, &wire.Error{Code: wire.CodeHandshakeRequired,
			Message: "this is a peer listener: the first frame must be PEER_HELLO, not " + f.Type.String()})
	case need == 0:
		return true
	}
	return false
}

// handle is one whole frame.
func (sc *serverConn) handle(f wire.Frame) {
	if !sc.helloDone {
		sc.handshake(f)
		return
	}
	dispatch(sc.t.handler.get(), &sc.ses, &sc.busy, sc.t.me.inflightMax, f, Reply{to: sc, id: f.RequestID})
}

// handshake answers PEER_HELLO with PEER_HELLO_OK, or refuses it.
func (sc *serverConn) handshake(f wire.Frame) {
	var h wire.PeerHello
	if err := h.Decode(f, wire.Limits{}); err != nil {
		sc.refuse(f.RequestID, toWireError(err))
		return
	}
	ses, ok, e := sc.t.me.accept(h)
	if e != nil {
		sc.t.cfg.Logger.Debug("peer handshake refused", "peer", string(h.BrokerID), "err", e)
		sc.refuse(f.RequestID, e)
		return
	}
	sc.ses, sc.helloDone = ses, true
	_ = sc.s.SetReadDeadline(time.Time{})
	_ = sc.out.send(f.RequestID, wire.AppendPeerHelloOK(nil, f.RequestID, ok))
}

// refuse answers with ERROR and closes the connection once it is written.
func (sc *serverConn) refuse(requestID uint64, e *wire.Error) {
	sc.refusing = true
	_ = sc.out.send(requestID, wire.AppendError(nil, requestID, e))
	sc.out.closeAfterFlush()
}

// answer is Reply.Answer on this connection.
func (sc *serverConn) answer(id uint64, frame []byte) error {
	if err := checkAnswer(frame, sc.ses.frameBytesMax); err != nil {
		return err
	}
	sc.busy.Add(-1)
	return sc.out.send(id, frame)
}

// close ends the connection, once: its answers are dropped from here on.
// Any goroutine.
func (sc *serverConn) close() {
	sc.once.Do(func() {
		sc.out.markClosed()
		sc.s.close()
		if sc.onClose != nil {
			sc.onClose()
		}
	})
}

// checkAnswer is checkFrame for an answer, within the asking broker's
// limit.
func checkAnswer(frame []byte, limit int) error {
	return checkFrame(frame, wire.Limits{FrameBytesMax: limit})
}

func toWireError(err error) *wire.Error { return wire.ErrorFrom(err) }
