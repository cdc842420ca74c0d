package peer

import (
	"sync"
	"sync/atomic"

	"github.com/panjf2000/gnet/v2"
)

// outbox is one peer connection's answers on their way to its socket, in
// the order they were given. Answers gather in buf while a write is with
// gnet (inflight) or while the loop is in OnTraffic (inTraffic, which
// writes them on its way out): a burst of answers becomes one write.
//
// Written on the loop, gnet's Write costs nothing per answer. An answer
// given off the loop, with nothing on its way, is written straight to the
// socket by the goroutine that gives it (writeDirectLocked): no loop
// wake-up, and nothing allocated. What the socket does not take then goes
// with AsyncWrite, whose task gnet allocates (once per write, whatever the
// write carries); its callback, on the loop, writes what gathered
// meanwhile.
//
// What gnet has not yet sent, and what waits here, are bounded together
// by backlogMax: past it the peer is not reading, and the connection is
// closed (its requests then fail at the peer as outcome unknown).
type outbox struct {
	gc         gnet.Conn
	fd         int // the socket, for direct writes; -1: none
	backlogMax int
	writtenFn  gnet.AsyncCallback // o.written, bound once
	sock       atomic.Int64       // gnet's outbound buffer, as last sampled on the loop

	mu         sync.Mutex
	buf        []byte // answers not yet handed to gnet
	spare      []byte
	writing    []byte // with gnet's AsyncWrite
	inflight   bool
	inTraffic  bool
	closeAfter bool // close once everything is written
	closed     bool
}

// answerBacklogBytesMax is the backlog a connection may hold before it is
// taken for a peer that does not read.
func answerBacklogBytesMax(frameBytesMax int) int { return 2*frameBytesMax + 4<<20 }

func (o *outbox) init(gc gnet.Conn, backlogMax int) {
	o.gc, o.fd, o.backlogMax = gc, socketFD(gc), backlogMax
	o.writtenFn = o.written
}

// send appends frame under the request's id and sees it written. Any
// goroutine; never blocks.
func (o *outbox) send(id uint64, frame []byte) error {
	o.mu.Lock()
	if o.closed || o.closeAfter {
		o.mu.Unlock()
		return ErrClosed
	}
	o.buf = appendWithID(o.buf, frame, id)
	if len(o.buf) > o.backlogMax {
		o.closeLocked()
		o.mu.Unlock()
		_ = o.gc.Close()
		return ErrClosed
	}
	if o.inflight || o.inTraffic || o.writeDirectLocked() {
		o.mu.Unlock()
		return nil
	}
	o.inflight = true
	w := o.swapLocked()
	o.writing = w
	o.mu.Unlock()
	if err := o.gc.AsyncWrite(w, o.writtenFn); err != nil { // the loop is gone
		o.markClosed()
	}
	return nil
}

// writeDirectLocked writes buf to the socket from the calling goroutine,
// once, and reports whether the socket took it all (what it did not take
// stays in buf, for gnet). It may only when nothing else is on its way to
// the socket: nothing with gnet and the loop not about to write (the
// caller checked inflight and inTraffic), and gnet's outbound buffer empty
// when last sampled. That sample is taken on the loop after every write
// handed to gnet, before inflight is cleared, and only those writes add
// to gnet's buffer: 0 means empty, and a stale non-zero only forgoes a
// direct write. mu is held throughout, and gnet calls OnClose (which takes
// mu) before it closes the descriptor, so fd is this connection's socket
// while closed is false. (netio's outbox writes acks the same way.)
func (o *outbox) writeDirectLocked() bool {
	if o.fd < 0 || o.sock.Load() != 0 {
		return false
	}
	n := writeFD(o.fd, o.buf)
	o.buf = o.buf[:copy(o.buf, o.buf[n:])]
	return len(o.buf) == 0
}

// swapLocked takes buf for writing and puts the spare in its place.
func (o *outbox) swapLocked() []byte {
	b := o.buf
	o.buf, o.spare = o.spare[:0], nil
	return b
}

// recycleLocked keeps a written buffer as the spare.
func (o *outbox) recycleLocked(b []byte) {
	if o.spare == nil && cap(b) <= spareKeepBytes {
		o.spare = b[:0]
	}
}

// written is the AsyncWrite callback, on the loop.
func (o *outbox) written(_ gnet.Conn, err error) error {
	o.mu.Lock()
	o.recycleLocked(o.writing)
	o.writing = nil
	if err != nil {
		o.inflight = false
		o.closeLocked()
		o.mu.Unlock()
		return nil
	}
	o.drainLocked()
	return nil
}

func (o *outbox) beginTraffic() {
	o.mu.Lock()
	o.inTraffic = true
	o.mu.Unlock()
}

// endTraffic writes, on the loop, what was answered during OnTraffic
// (and meanwhile), unless a write is with gnet: its callback will.
func (o *outbox) endTraffic() {
	o.mu.Lock()
	o.inTraffic = false
	if o.inflight {
		o.mu.Unlock()
		return
	}
	o.inflight = true
	o.drainLocked()
}

// drainLocked runs on the loop with mu held and inflight set: it writes
// buf until it is empty, clears inflight, closes the connection if asked
// to or if its backlog passed the bound, and unlocks.
func (o *outbox) drainLocked() {
	for len(o.buf) > 0 && !o.closed {
		out := o.swapLocked()
		o.mu.Unlock()
		_, err := o.gc.Write(out) // may close the connection: OnClose takes mu
		o.mu.Lock()
		o.recycleLocked(out)
		if err != nil {
			o.closeLocked()
		}
	}
	o.inflight = false
	backlog := o.gc.OutboundBuffered()
	o.sock.Store(int64(backlog))
	shut := !o.closed && (o.closeAfter || backlog > o.backlogMax)
	o.mu.Unlock()
	if shut {
		_ = o.gc.Close()
	}
}

// closeAfterFlush closes the connection once everything given so far is
// written. On the loop, in OnTraffic (endTraffic writes and closes).
func (o *outbox) closeAfterFlush() {
	o.mu.Lock()
	o.closeAfter = true
	o.mu.Unlock()
}

// markClosed is OnClose's: the connection is gone, answers are dropped.
func (o *outbox) markClosed() {
	o.mu.Lock()
	o.closeLocked()
	o.mu.Unlock()
}

func (o *outbox) closeLocked() {
	o.closed = true
	o.buf, o.spare = nil, nil
}
