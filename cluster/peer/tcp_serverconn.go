package peer

import (
	"sync/atomic"

	"github.com/panjf2000/gnet/v2"

	"github.com/felixbroker/felix/netio/wire"
)

// serverConn is one connection a peer dialled to this broker. The fields
// under "loop" are its event loop's alone.
type serverConn struct {
	t    *TCP
	gc   gnet.Conn
	out  outbox
	busy atomic.Int64 // requests in service: handed over, not yet answered

	// loop
	reader    wire.Reader
	part      []byte  // the start of a frame a read left unfinished
	ses       session // set by the handshake
	helloDone bool
	refusing  bool // a fatal error was answered: ignore everything until the close
}

// partKeepBytes bounds the unfinished-frame buffer kept after its frame.
const partKeepBytes = 1 << 20

func newServerConn(t *TCP, gc gnet.Conn) *serverConn {
	sc := &serverConn{t: t, gc: gc, reader: wire.Reader{Limits: t.lim}}
	sc.out.init(gc, answerBacklogBytesMax(t.me.frameBytesMax))
	return sc
}

// traffic is OnTraffic: handle every whole frame the read brought, keep
// the start of the next, then write the answers given meanwhile in one go.
func (sc *serverConn) traffic() {
	sc.out.beginTraffic()
	sc.readFrames()
	sc.out.endTraffic()
}

// readFrames consumes every byte gnet holds: whole frames are handled
// where they lie in the loop's read buffer, the start of one still
// arriving is copied into part (so gnet's own inbound buffer is never
// used). A frame is checked (its size against the limits, its type, HELLO
// first) as soon as its header is in, before its body is waited for.
func (sc *serverConn) readFrames() {
	if len(sc.part) == 0 || sc.finishPart() {
		sc.readWhole()
	}
	if sc.refusing {
		_, _ = sc.gc.Discard(sc.gc.InboundBuffered())
	}
}

// readWhole handles the frames lying whole in the read, in place, and
// keeps the start of the next.
func (sc *serverConn) readWhole() {
	for !sc.refusing {
		n := sc.gc.InboundBuffered()
		if n == 0 {
			return
		}
		buf, _ := sc.gc.Peek(n)
		f, need, err := sc.reader.Next(buf)
		if !sc.admit(f, need, err, len(buf)) {
			sc.keepPart(buf)
			return
		}
		sc.handle(f)
		_, _ = sc.gc.Discard(f.Size())
	}
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

// keepPart copies the unfinished frame a read left into part and consumes
// the read.
func (sc *serverConn) keepPart(rest []byte) {
	if !sc.refusing {
		sc.part = append(sc.part[:0], rest...)
	}
	_, _ = sc.gc.Discard(len(rest))
}

// finishPart adds to part what its frame still lacks, as far as the read
// holds it, and handles the frame once whole; false while it is not.
func (sc *serverConn) finishPart() bool {
	for {
		f, need, err := sc.reader.Next(sc.part)
		if !sc.admit(f, need, err, len(sc.part)) {
			if sc.refusing {
				sc.dropPart()
				return false
			}
			n := min(need, sc.gc.InboundBuffered())
			if n == 0 {
				return false
			}
			more, _ := sc.gc.Peek(n)
			sc.part = append(sc.part, more...)
			_, _ = sc.gc.Discard(n)
			continue
		}
		sc.handle(f)
		sc.dropPart()
		return true
	}
}

// dropPart lets go of a handled unfinished frame, keeping its buffer for
// the next one unless it is large.
func (sc *serverConn) dropPart() {
	if cap(sc.part) > partKeepBytes {
		sc.part = nil
		return
	}
	sc.part = sc.part[:0]
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
	sc.t.srv.shaken(sc)
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

// checkAnswer is checkFrame for an answer, within the asking broker's
// limit.
func checkAnswer(frame []byte, limit int) error {
	return checkFrame(frame, wire.Limits{FrameBytesMax: limit})
}

func toWireError(err error) *wire.Error { return wire.ErrorFrom(err) }
