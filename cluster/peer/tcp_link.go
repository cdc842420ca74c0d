package peer

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// linkState is where a link is in its connection's life.
//
//	idle ──request──> dialing ──handshake done──> up ──connection fails──> idle
//	                     │                                                  (the next request dials)
//	                     └──dial or handshake fails──> waiting ──backoff over,
//	                         (requests fail at once)              next request──> dialing
//
// Any state goes to closed with Close.
type linkState uint8

const (
	linkIdle linkState = iota
	linkDialing
	linkUp
	linkWaiting
	linkClosed
)

// link is this broker's requests to one peer: the requests in flight
// (core), the buffer their frames gather in, and the connection, which
// comes and goes while the link stays. Everything below core is guarded by
// core.mu.
type link struct {
	t    *TCP
	core core

	state    linkState
	conn     *dialConn // linkUp: the connection
	ses      session   // linkUp: what its handshake settled
	attempt  int       // dials failed in a row
	retryAt  time.Time // linkWaiting: when the next request may dial
	lastErr  error     // linkWaiting: why the last dial failed
	lastAddr string    // linkWaiting: the address it failed on ("": none resolved)
	buf      []byte    // frames not yet handed to the socket, in request id order
	spare    []byte    // the other buffer, swapped in while one is written
	bufSeq   uint64    // the sequence of the last request in buf
	cut      int       // buf's first cut bytes finish a frame a write took the start of
	cutSeq   uint64    // that frame's sequence
	flushing bool      // a write is under way (a caller's or the flusher's)
	drained  chan struct{}

	writes  uint64 // writes made, for tests and figures
	frames  uint64 // requests queued
	directs uint64 // writes a Send made without waiting
	partial uint64 // of them, those the socket took only part of
}

// spareKeepBytes bounds the buffer a link keeps for reuse after a write.
const spareKeepBytes = 1 << 20

func newLink(t *TCP, peer string) *link {
	l := &link{t: t}
	l.core.init(peer, t.me.inflightMax)
	return l
}

// enqueue appends c's frame to the buffer under a fresh request id and
// sees that it is written: by dialing, by the flusher, or (a Call, which
// may block) by the caller itself when no write is under way. A token is
// held for c; on error it is given back. (Handing a Call to the flusher
// whenever others are in flight, so their frames could gather, measured
// worse: 16 synchronous callers on 2 vCPUs still made one request per
// write, each now waiting for the flusher to wake.)
func (l *link) enqueue(ctx context.Context, c *Call, wait bool) error {
	k := &l.core
	k.mu.Lock()
	now := time.Now()
	err := l.admitLocked(c, now)
	for err == nil && len(l.buf) > 0 && len(l.buf)+len(c.Request) > l.t.bufMax {
		err = l.waitDrainedLocked(ctx, wait)
		if err == nil {
			err = l.admitLocked(c, now)
		}
	}
	if err != nil {
		k.mu.Unlock()
		k.release()
		return err
	}
	id := k.addLocked(c, now)
	l.buf = appendWithID(l.buf, c.Request, id)
	l.bufSeq = seqOf(id)
	l.frames++
	l.kickLocked(wait, len(c.Request))
	return nil
}

// admitLocked refuses a request the link cannot take now.
func (l *link) admitLocked(c *Call, now time.Time) error {
	switch l.state {
	case linkClosed:
		return notSent(l.core.peer, ErrClosed)
	case linkWaiting:
		if now.Before(l.retryAt) && !l.movedLocked() {
			return notSent(l.core.peer, fmt.Errorf("%w (the next dial in %v)", l.lastErr, l.retryAt.Sub(now).Round(time.Millisecond)))
		}
		l.state = linkIdle
	case linkUp:
		if len(c.Request) > l.ses.frameBytesMax {
			return notSent(l.core.peer, wrap(ErrBadFrame, &wire.LimitError{Limit: wire.LimitFrameBytes,
				Max: l.ses.frameBytesMax, Got: uint64(len(c.Request))}))
		}
	}
	return nil
}

// movedLocked reports whether the peer now resolves to another address
// than the one the last dial failed on: it registered again (a restart on
// another port), so the backoff, which was about the old address, is over
// and the next request dials at once. Resolve is the control plane's
// registrations, read without waiting.
func (l *link) movedLocked() bool {
	addr, err := l.t.cfg.Resolve(l.core.peer)
	if err != nil || addr == l.lastAddr {
		return false
	}
	l.attempt = 0
	return true
}

// waitDrainedLocked waits, mu released meanwhile, until the buffer is
// taken for writing; a Send does not wait: ErrBusy.
func (l *link) waitDrainedLocked(ctx context.Context, wait bool) error {
	if !wait {
		return l.core.busy
	}
	if l.drained == nil {
		l.drained = make(chan struct{})
	}
	ch := l.drained
	l.core.mu.Unlock()
	defer l.core.mu.Lock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return notSent(l.core.peer, wrap(ErrBusy, ctx.Err()))
	}
}

// kickLocked sees that the buffer gets written once a request of size
// bytes joined it, and unlocks: by dialing, by the caller (a Call, which
// may block, writes and waits; a Send alone on the link, or a large one,
// writes once without waiting), or by the flusher.
func (l *link) kickLocked(inline bool, size int) {
	switch {
	case l.state == linkIdle:
		l.state = linkDialing
		l.t.wg.Add(1)
		go l.dial()
	case l.state != linkUp || l.flushing:
	case inline:
		l.flushing = true
		l.writeInlineLocked(l.conn)
		return
	case l.conn.s.raw != nil && (l.aloneLocked() || size >= directFrameBytesMin):
		l.flushing = true
		l.writeDirectLocked(l.conn)
		return
	default:
		l.flushing = true
		l.conn.kick()
	}
	l.core.mu.Unlock()
}

// writeInlineLocked writes the buffer on the caller's goroutine: an idle
// link costs one write and no hand-off. What gathers meanwhile is the
// flusher's, so no caller writes others' frames for ever. Unlocks.
func (l *link) writeInlineLocked(dc *dialConn) {
	err := l.writeOnceLocked(dc)
	if err == nil && l.conn == dc && len(l.buf) > 0 {
		l.core.mu.Unlock()
		dc.kick() // flushing stays set: the flusher takes over
		return
	}
	if l.conn == dc {
		l.flushing = false
	}
	l.core.mu.Unlock()
	if err != nil {
		l.fail(dc, err)
	}
}

// aloneLocked reports whether the request just added is the only one in
// flight: a Send then writes itself, and a small one among others leaves
// its frame to the flusher, whose writes gather them. (Sends always
// writing themselves made one write per request for a pipelining caller:
// BenchmarkPipelinedSend went from 127 requests per write to 1, and took
// three times as long.)
func (l *link) aloneLocked() bool { return len(l.core.free) == len(l.core.slots)-1 }

// directFrameBytesMin is the frame a Send writes itself even among others
// in flight: gathering it with others would save a write's fixed cost,
// small beside its bytes', and waking the flusher costs a hand-off.
// (Pipelined publishes of 64 KiB, forwarded from an event loop: 0.49-0.65
// of the direct bandwidth through the flusher, 0.65-0.86 written by the
// loop.)
const directFrameBytesMin = 16 << 10

// writeDirectLocked writes the buffer on a Send's goroutine (an event
// loop, often), once and without waiting for the socket: an idle link
// costs one write and no hand-off, and Send still never blocks. What the
// socket does not take, and what gathers meanwhile, is the flusher's, as
// is a write that failed: it writes again, waiting, and fails the
// connection if that fails too, so no Done runs inside Send. Unlocks.
// (Waking the flusher for every Send cost a hand-off per request: on 2
// vCPUs a forwarded publish's round trip waited tens of microseconds for
// it to get a processor.)
func (l *link) writeDirectLocked(dc *dialConn) {
	out, w := l.takeBufLocked()
	l.directs++
	l.core.mu.Unlock()
	n, _ := dc.s.tryWrite(out) // a failure leaves out unwritten: the flusher meets it
	l.core.mu.Lock()
	switch {
	case l.conn != dc: // the connection failed meanwhile, and its requests with it
		l.recycleLocked(out)
	case n < len(out):
		l.partial++
		l.requeueLocked(out, w, n)
		dc.kick() // flushing stays set: the flusher takes over
	case len(l.buf) > 0:
		l.recycleLocked(out)
		dc.kick()
	default:
		l.recycleLocked(out)
		l.flushing = false
	}
	l.core.mu.Unlock()
}

// writeOnceLocked takes the buffer and writes it to dc, mu released during
// the write. A write that fails takes back the claim that the requests
// past its last whole frame may have reached the peer (the connection
// fails next: they are not sent), unless the connection already failed.
func (l *link) writeOnceLocked(dc *dialConn) error {
	out, w := l.takeBufLocked()
	l.core.mu.Unlock()
	n, err := dc.s.write(out)
	l.core.mu.Lock()
	if err != nil && l.conn == dc {
		l.core.sent, _, _ = w.upTo(out, n)
	}
	l.recycleLocked(out)
	return err
}

// takeBufLocked takes the buffer for a write, the spare in its place, and
// says where the write starts. Every request in it may reach the peer from
// here on: a failure of the connection meanwhile (its reader's) fails
// them as outcome unknown.
func (l *link) takeBufLocked() ([]byte, writeStart) {
	out := l.buf
	w := writeStart{sent: l.core.sent, cut: l.cut, cutSeq: l.cutSeq}
	l.buf, l.spare, l.cut = l.spare[:0], nil, 0
	l.core.sent = l.bufSeq
	l.writes++
	if l.drained != nil {
		close(l.drained)
		l.drained = nil
	}
	return out, w
}

// writeStart is where a write of the link's buffer starts: what was sent
// before it, and the bytes at its head that finish a frame an earlier
// write cut short.
type writeStart struct {
	sent   uint64
	cut    int
	cutSeq uint64
}

// recycleLocked keeps a written buffer as the spare, unless it is large.
func (l *link) recycleLocked(out []byte) {
	if l.spare == nil && cap(out) <= spareKeepBytes {
		l.spare = out[:0]
	}
}

// requeueLocked puts what a write left of out (the socket took its first n
// bytes) back in front of the frames that gathered meanwhile, and takes
// back the claim that those requests may have reached the peer: a frame
// the peer has only the start of cannot have been applied, so sent is the
// last request written whole, and the next write starts by finishing the
// frame cut short.
func (l *link) requeueLocked(out []byte, w writeStart, n int) {
	var rest int
	l.core.sent, rest, l.cutSeq = w.upTo(out, n)
	l.cut = rest
	gathered := l.buf
	l.buf = append(out[:copy(out, out[n:])], gathered...)
	l.recycleLocked(gathered)
}

// upTo reads a write that took the first n bytes of out (the cut bytes at
// its head finish frame cutSeq, whole frames in request id order follow):
// sent is the sequence of the last request whose frame is now whole at
// the peer (w.sent when none is), and rest the bytes the frame the write
// cut short still lacks (0 when it ended between frames), seq that
// frame's sequence.
func (w writeStart) upTo(out []byte, n int) (sent uint64, rest int, seq uint64) {
	sent = w.sent
	if w.cut > 0 {
		if n < w.cut {
			return sent, w.cut - n, w.cutSeq
		}
		sent = w.cutSeq
	}
	for off := w.cut; off+wire.HeaderSize <= len(out) && off < n; {
		end := off + 4 + int(binary.LittleEndian.Uint32(out[off:]))
		s := seqOf(binary.LittleEndian.Uint64(out[off+requestIDAt:]))
		if end > n {
			return sent, end - n, s
		}
		sent, off = s, end
	}
	return sent, 0, 0
}

// flusher writes what gathers in the buffer while a write is under way,
// for as long as dc is the link's connection.
func (l *link) flusher(dc *dialConn) {
	defer l.t.wg.Done()
	for {
		select {
		case <-dc.kickCh:
		case <-dc.stop:
			return
		}
		l.core.mu.Lock()
		var err error
		for err == nil && l.conn == dc && len(l.buf) > 0 {
			err = l.writeOnceLocked(dc)
		}
		if l.conn == dc {
			l.flushing = false
		}
		l.core.mu.Unlock()
		if err != nil {
			l.fail(dc, err)
		}
	}
}

// dial connects the link (dialing, handshake) and starts the connection's
// goroutines, or fails the requests that waited for it and backs off.
func (l *link) dial() {
	defer l.t.wg.Done()
	dc, ses, addr, err := l.t.connect(l.core.peer)
	k := &l.core
	k.mu.Lock()
	if l.state == linkClosed {
		k.mu.Unlock()
		if dc != nil {
			dc.close()
		}
		return
	}
	if err != nil {
		l.attempt++
		l.state, l.lastErr, l.lastAddr = linkWaiting, err, addr
		l.retryAt = time.Now().Add(backoff(l.attempt, l.t.cfg.BackoffBase, l.t.cfg.BackoffMax, l.t.cfg.jitter()))
		list, attempt := l.dropLocked(), l.attempt // attempt read under mu: another dial may write it after
		k.mu.Unlock()
		l.t.cfg.Logger.Debug("peer dial failed", "peer", k.peer, "attempt", attempt, "err", err)
		k.fail(list, err)
		return
	}
	l.attempt, l.state, l.conn, l.ses = 0, linkUp, dc, ses
	l.t.wg.Add(2)
	go l.reader(dc)
	go l.flusher(dc)
	if len(l.buf) > 0 {
		l.flushing = true
		dc.kick()
	}
	k.mu.Unlock()
}

// dropLocked takes every request in flight out of the link and empties the
// buffer: the connection they were for is gone.
func (l *link) dropLocked() []failed {
	list := l.core.drainLocked(nil)
	l.buf, l.bufSeq, l.flushing, l.cut = l.buf[:0], 0, false, 0
	if l.drained != nil {
		close(l.drained)
		l.drained = nil
	}
	return list
}

// fail ends dc, if it is still the link's connection, and every request
// on it: ErrOutcomeUnknown for those already written, ErrNotSent for the
// rest. The next request dials again.
func (l *link) fail(dc *dialConn, cause error) {
	k := &l.core
	k.mu.Lock()
	if l.conn != dc {
		k.mu.Unlock()
		return
	}
	l.conn, l.ses = nil, session{}
	if l.state == linkUp {
		l.state = linkIdle
	}
	list := l.dropLocked()
	k.mu.Unlock()
	dc.close()
	l.t.cfg.Logger.Debug("peer connection lost", "peer", k.peer, "err", cause)
	k.fail(list, wrap(ErrConnectionLost, cause))
}

// close is Close's: no more requests, and none left in flight.
func (l *link) close() {
	k := &l.core
	k.mu.Lock()
	dc := l.conn
	l.state, l.conn = linkClosed, nil
	list := l.dropLocked()
	k.mu.Unlock()
	if dc != nil {
		dc.close()
	}
	k.fail(list, ErrClosed)
}

// stats are a link's write counters.
func (l *link) stats() (writes, frames uint64) {
	l.core.mu.Lock()
	defer l.core.mu.Unlock()
	return l.writes, l.frames
}
