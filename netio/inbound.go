package netio

import (
	"encoding/binary"
	"errors"
	"strconv"
	"sync/atomic"

	"github.com/felixbroker/felix/netio/wire"
)

// Inbound frames. A frame that arrived whole in one socket read is decoded
// where it lies, in the loop's read buffer. What a read leaves over, the
// start of a frame still arriving, is copied out into a frameBuf of the
// connection's own, and the rest of that frame is added as it arrives: a
// read is always consumed to its last byte, so gnet's own per-connection
// inbound buffer (which grows by doubling, and whose pooled memory outlives
// the connection) is never used, nor the TLS reader's beyond its first
// buffer.
//
// What bounds the memory a peer can make the broker hold for its frames:
//
//   - a frame's declared size against its type's bound (Limits.FrameBytesFor)
//     as soon as the header is in; before the handshake only HELLO, at most
//     about 8.5 KiB, is accepted;
//   - a frameBuf grows with the bytes that have arrived, never ahead of
//     them (at most half again what has arrived, and half again the frame;
//     4 KiB at least);
//   - the frameBufs of all connections together against
//     Config.InboundBytesMax: a connection whose frame would take more is
//     shed (ERROR overloaded, closed);
//   - a started frame must be whole within Config.FrameTimeout, and only
//     whole frames are activity for the idle timeout: a trickle of bytes
//     keeps nothing open.
//
// A frameBuf goes back to its pool once its frame is handled, or when the
// connection closes.

// unfinished is a connection's frame still arriving: buf on the loop only,
// since read by the sweep too.
type unfinished struct {
	buf   *frameBuf    // the frame's bytes so far; nil: none started
	since atomic.Int64 // the coarse clock when its first byte came; 0: none
}

// readFrames handles every whole frame the transport holds, then keeps the
// start of the next one. It reports whether a frame was handled. Loop only.
func (c *conn) readFrames() bool {
	handled := false
	for !c.refusing {
		f, ok := c.nextFrame()
		if !ok {
			break
		}
		handled = true
		c.s.cfg.Metrics.BytesIn.Add(uint64(f.Size()))
		c.handle(f)
		c.consume(f)
	}
	if !c.refusing {
		c.keepUnfinished()
	}
	if c.refusing {
		_, _ = c.gc.Discard(c.gc.InboundBuffered())
		c.dropUnfinished()
	}
	return handled
}

// nextFrame is the next whole frame: the unfinished one once the transport
// holds its last bytes, or one lying whole in the transport's buffer.
func (c *conn) nextFrame() (wire.Frame, bool) {
	if c.part.buf != nil {
		return c.finishUnfinished()
	}
	n := c.gc.InboundBuffered()
	if n == 0 {
		return wire.Frame{}, false
	}
	buf, _ := c.gc.Peek(n)
	f, need, err := c.reader.Next(buf)
	return c.checkFrame(f, need, err, buf)
}

// consume lets go of a handled frame's bytes.
func (c *conn) consume(f wire.Frame) {
	if c.part.buf != nil {
		c.dropUnfinished()
		return
	}
	_, _ = c.gc.Discard(f.Size())
}

// checkFrame turns the Reader's verdict on b into a frame to handle. A
// frame that can never be valid is refused, and so is one whose header
// says it is not the HELLO the handshake waits for, without waiting for
// its body.
func (c *conn) checkFrame(f wire.Frame, need int, err error, b []byte) (wire.Frame, bool) {
	switch {
	case err != nil:
		c.refuseFrame(f, err, b)
	case need == 0:
		return f, true
	case len(b) >= wire.HeaderSize && !c.helloDone.Load():
		c.refuseNotHello(f)
	}
	return wire.Frame{}, false
}

// refuseFrame answers a frame that breaks the framing, naming its request
// when the header is in.
func (c *conn) refuseFrame(f wire.Frame, err error, b []byte) {
	id := f.RequestID // set when the header is sound but the type or flags are not
	if errors.Is(err, wire.CodeFrameTooLarge) {
		id = requestIDOf(b) // too long, yet a header: answer it
	}
	c.refuse(id, toWire(err))
}

// requestIDOf reads the request id of a header, or 0 when it is not all in.
func requestIDOf(head []byte) uint64 {
	if len(head) < wire.HeaderSize {
		return 0
	}
	return binary.LittleEndian.Uint64(head[8:])
}

// finishUnfinished moves what the unfinished frame still needs out of the
// transport, as far as the transport holds it; the frame, once whole.
func (c *conn) finishUnfinished() (wire.Frame, bool) {
	for {
		have := c.part.buf.b
		f, need, err := c.reader.Next(have)
		n := min(need, c.gc.InboundBuffered())
		if err != nil || n == 0 {
			return c.checkFrame(f, need, err, have)
		}
		more, _ := c.gc.Peek(n)
		if !c.addUnfinished(more) {
			return wire.Frame{}, false
		}
		_, _ = c.gc.Discard(n)
	}
}

// keepUnfinished copies the start of a frame a read left over out of the
// transport into a frameBuf.
func (c *conn) keepUnfinished() {
	n := c.gc.InboundBuffered()
	if n == 0 {
		return
	}
	rest, _ := c.gc.Peek(n)
	fb := c.takeFrameBuf(frameBufBytes(n), rest)
	if fb == nil {
		return
	}
	fb.b = append(fb.b, rest...)
	c.part.buf = fb
	c.part.since.Store(c.s.clock.Load())
	_, _ = c.gc.Discard(n)
}

// addUnfinished appends more to the unfinished frame, growing its buffer
// within the inbound budget; false when the budget has no room and the
// connection is shed.
func (c *conn) addUnfinished(more []byte) bool {
	fb := c.part.buf
	if need := len(fb.b) + len(more); need > cap(fb.b) {
		bigger := c.takeFrameBuf(frameBufBytes(need), fb.b)
		if bigger == nil {
			return false
		}
		bigger.b = append(bigger.b, fb.b...)
		c.s.giveInbound(fb)
		c.part.buf = bigger
	}
	c.part.buf.b = append(c.part.buf.b, more...)
	return true
}

// frameBufBytes is the buffer an unfinished frame takes to hold need of
// its bytes: the class that holds them, so that the pools serve the next
// frame of its size without allocating. Only bytes that have arrived are
// asked for, and a frame's bytes never pass its size, so a buffer is at
// most half again what has arrived and half again the frame.
func frameBufBytes(need int) int {
	return frameBufClassBytes(frameBufClassFor(need))
}

// takeFrameBuf is a buffer of n bytes from the inbound budget, or nil when
// the budget has no room: then the connection is shed, its answer naming
// the request of the frame whose first bytes are head.
func (c *conn) takeFrameBuf(n int, head []byte) *frameBuf {
	fb := getFrameBuf(n)
	if c.s.takeInbound(cap(fb.b)) {
		return fb
	}
	putFrameBuf(fb)
	c.shed(requestIDOf(head))
	return nil
}

// dropUnfinished gives the unfinished frame's buffer back. Loop only; also
// when the connection closes.
func (c *conn) dropUnfinished() {
	if c.part.buf == nil {
		return
	}
	c.s.giveInbound(c.part.buf)
	c.part.buf = nil
	c.part.since.Store(0)
}

// shed closes a connection whose frame would take the inbound budget past
// Config.InboundBytesMax: the newest growth is refused, so what is held
// never passes the bound; the client may retry later (overloaded).
func (c *conn) shed(requestID uint64) {
	c.refusing = true
	c.s.cfg.Metrics.ConnectionsShed.Add(1)
	c.sendError(requestID, &wire.Error{Code: wire.CodeOverloaded,
		Message: "the unfinished frames of every connection hold the broker's limit of " +
			strconv.Itoa(c.s.cfg.InboundBytesMax) + " bytes"})
	c.out.closeAfterFlush()
}

// takeInbound counts n more bytes held by unfinished frames, unless that
// would pass Config.InboundBytesMax.
func (s *Server) takeInbound(n int) bool {
	if s.inboundHeld.Add(int64(n)) > int64(s.cfg.InboundBytesMax) {
		s.inboundHeld.Add(-int64(n))
		return false
	}
	s.cfg.Metrics.InboundBuffered.Add(int64(n))
	return true
}

// giveInbound returns an unfinished frame's buffer to its pool and its
// bytes to the budget.
func (s *Server) giveInbound(fb *frameBuf) {
	n := int64(cap(fb.b))
	putFrameBuf(fb)
	s.inboundHeld.Add(-n)
	s.cfg.Metrics.InboundBuffered.Add(-n)
}
