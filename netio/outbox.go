package netio

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
)

// outboxKeepBytes is the largest buffer an outbox keeps for reuse; a
// bigger one (after a burst of events) goes back to the garbage collector.
const outboxKeepBytes = 256 << 10

// Polling bounds while a subscriber waits for a full socket to drain: gnet
// says nothing when its outbound buffer empties, so a blocked deliverer
// asks the loop again after these delays, doubling.
const (
	drainPollFirst = time.Millisecond
	drainPollMax   = 32 * time.Millisecond
)

// outbox is one connection's ordered queue of frames for its socket. Every
// frame the broker sends goes through it, so frames keep the order in
// which they were committed (SUBSCRIBED before the subscription's events,
// events before the OK of their UNSUBSCRIBE).
//
// At most one buffer is with gnet at a time (inflight). Frames committed
// meanwhile collect in buf, and the loop writes them when gnet reports the
// previous buffer written: a burst of acknowledgements from one group
// commit becomes one write. While the loop is in OnTraffic (deferred) it
// flushes everything committed on its way out, so answers to one read go
// out in one write.
//
// used() is the connection's outbound budget: bytes committed and not yet
// written into gnet (queued) plus gnet's own outbound buffer as last seen on
// the loop (sock). Deliverers pull events only while it is below the
// budget; answers are always accepted, and a connection whose answers pile
// past twice the budget is closed (a client that sends and never reads).
type outbox struct {
	gc        transport
	budget    int
	hardCap   int
	metrics   *Metrics
	writtenFn gnet.AsyncCallback // o.written, bound once

	mu         sync.Mutex
	buf        []byte // committed frames not yet handed to gnet
	spare      []byte // an empty buffer to swap in
	writing    []byte // the buffer gnet is writing
	inflight   bool   // writing is with gnet (an AsyncWrite queued, or a Write on the loop)
	deferred   bool   // the loop is in OnTraffic and flushes when it returns
	closeAfter bool   // close the connection once everything is written
	closed     bool   // the connection is gone: commits are dropped
	room       chan struct{}

	queued atomic.Int64 // len(buf) + len(writing)
	sock   atomic.Int64 // gnet's outbound buffer, sampled on the loop
	peak   atomic.Int64 // high-water mark of used()
}

func newOutbox(gc transport, budget, frameMax int, m *Metrics) *outbox {
	o := &outbox{gc: gc, budget: budget, hardCap: 2*budget + frameMax, metrics: m}
	o.writtenFn = o.written
	return o
}

// used is the connection's outbound budget in use.
func (o *outbox) used() int64 { return o.queued.Load() + o.sock.Load() }

// begin locks the outbox and returns the buffer to append frames to; the
// caller must hand it back with commit. Appending allocates only when the
// buffer grows.
func (o *outbox) begin() []byte {
	o.mu.Lock()
	return o.buf
}

// commit takes back the buffer begin returned, with frames appended, and
// schedules a write. Once the connection is closing, frames are dropped:
// the ERROR that closes it is the last frame it sends.
func (o *outbox) commit(b []byte) {
	if o.closed || o.closeAfter {
		o.buf = b[:len(o.buf)]
		o.mu.Unlock()
		return
	}
	o.account(len(b) - len(o.buf))
	o.buf = b
	o.kickLocked()
	over := o.used() > int64(o.hardCap)
	o.mu.Unlock()
	if over {
		o.abort()
	}
}

// account moves the queued count and the server-wide gauge by delta.
func (o *outbox) account(delta int) {
	q := o.queued.Add(int64(delta))
	o.metrics.OutboundBuffered.Add(int64(delta))
	if u := q + o.sock.Load(); u > o.peak.Load() {
		o.peak.Store(u)
	}
}

// kickLocked hands buf to gnet unless a write is already on its way or the
// loop will flush on its way out of OnTraffic.
func (o *outbox) kickLocked() {
	if o.inflight || o.deferred {
		return
	}
	if len(o.buf) == 0 {
		if o.closeAfter {
			_ = o.gc.Close()
		}
		return
	}
	o.inflight = true
	o.writing = o.swapLocked()
	if err := o.gc.AsyncWrite(o.writing, o.writtenFn); err != nil {
		// The loop is gone (the engine is stopping): nothing will call back.
		o.account(-len(o.writing))
		o.writing, o.inflight = nil, false
		o.closeLocked()
	}
}

// swapLocked takes buf for writing and puts the spare in its place.
func (o *outbox) swapLocked() []byte {
	b := o.buf
	o.buf, o.spare = o.spare[:0], nil
	return b
}

// doneWritingLocked accounts the buffer gnet has written and keeps it as
// the spare.
func (o *outbox) doneWritingLocked() {
	n := len(o.writing)
	o.account(-n)
	o.metrics.BytesOut.Add(uint64(n))
	if cap(o.writing) <= outboxKeepBytes {
		o.spare = o.writing[:0]
	}
	o.writing = nil
}

// written is the AsyncWrite callback, on the loop: gnet has sent the buffer
// or copied it into its outbound buffer.
func (o *outbox) written(_ gnet.Conn, err error) error {
	o.mu.Lock()
	o.doneWritingLocked()
	if err != nil {
		o.inflight = false
		o.closeLocked()
		o.mu.Unlock()
		return nil
	}
	o.drainLocked()
	return nil
}

// beginTraffic marks the loop as inside OnTraffic: commits wait for its
// flushOnLoop instead of each scheduling a write.
func (o *outbox) beginTraffic() {
	o.mu.Lock()
	o.deferred = true
	o.mu.Unlock()
}

// flushOnLoop writes what OnTraffic (and anyone meanwhile) committed, on
// the loop, unless a write is already with gnet (its callback will).
func (o *outbox) flushOnLoop() {
	o.mu.Lock()
	o.deferred = false
	if o.inflight || o.closed {
		o.mu.Unlock()
		return
	}
	o.inflight = true
	o.drainLocked()
}

// drainLocked runs on the loop with mu held and inflight set: it writes buf
// until it is empty, samples gnet's outbound buffer, closes the connection
// if asked to, wakes waiting deliverers, and unlocks.
func (o *outbox) drainLocked() {
	for len(o.buf) > 0 && !o.closed {
		o.writing = o.swapLocked()
		o.mu.Unlock()
		_, err := o.gc.Write(o.writing) // may close the connection: OnClose takes mu
		o.mu.Lock()
		o.doneWritingLocked()
		if err != nil {
			o.closeLocked()
		}
	}
	o.inflight = false
	if !o.closed {
		o.sampleSockLocked()
		if o.closeAfter {
			_ = o.gc.Close()
		}
	}
	o.signalRoomLocked()
	o.mu.Unlock()
}

// sampleSockLocked reads gnet's outbound buffer; on the loop only.
func (o *outbox) sampleSockLocked() {
	n := int64(o.gc.OutboundBuffered())
	old := o.sock.Swap(n)
	o.metrics.OutboundBuffered.Add(n - old)
	if u := o.queued.Load() + n; u > o.peak.Load() {
		o.peak.Store(u)
	}
}

// closeAfterFlush closes the connection once everything committed so far
// is written.
func (o *outbox) closeAfterFlush() {
	o.mu.Lock()
	o.closeAfter = true
	if !o.closed {
		o.kickLocked()
	}
	o.mu.Unlock()
}

// abort closes a connection whose answers piled past the hard cap,
// dropping what it holds.
func (o *outbox) abort() {
	o.mu.Lock()
	already := o.closed
	o.closeLocked()
	o.mu.Unlock()
	if !already {
		o.metrics.AnswersUnread.Add(1)
		_ = o.gc.Close()
	}
}

// markClosed is OnClose's: the connection is gone.
func (o *outbox) markClosed() {
	o.mu.Lock()
	o.closeLocked()
	o.mu.Unlock()
}

func (o *outbox) closeLocked() {
	if o.closed {
		return
	}
	o.closed = true
	o.account(-len(o.buf))
	o.buf, o.spare = nil, nil
	old := o.sock.Swap(0)
	o.metrics.OutboundBuffered.Add(-old)
	o.signalRoomLocked()
}

func (o *outbox) signalRoomLocked() {
	if o.room != nil {
		close(o.room)
		o.room = nil
	}
}

// waitRoom blocks a deliverer until the connection's budget has room, and
// returns how much. It fails once the connection closes or ctx ends.
func (o *outbox) waitRoom(ctx context.Context) (int, error) {
	poll := drainPollFirst
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		o.mu.Lock()
		if o.closed {
			o.mu.Unlock()
			return 0, errConnClosed
		}
		if used := o.used(); used < int64(o.budget) {
			o.mu.Unlock()
			return o.budget - int(used), nil
		}
		if o.room == nil {
			o.room = make(chan struct{})
		}
		room := o.room
		// Only gnet's buffer is full and nothing is on its way: nobody will
		// say when it drains, so ask the loop after a while.
		stalled := !o.inflight && !o.deferred && o.sock.Load() > 0
		o.mu.Unlock()
		var tick <-chan time.Time
		if stalled {
			if timer == nil {
				timer = time.NewTimer(poll)
			} else {
				timer.Reset(poll)
			}
			tick = timer.C
		}
		select {
		case <-room:
		case <-tick:
			poll = min(2*poll, drainPollMax)
			o.probe()
		case <-ctx.Done():
			return 0, context.Cause(ctx)
		}
	}
}

// probe asks the loop to sample gnet's outbound buffer again.
func (o *outbox) probe() {
	if err := o.gc.EventLoop().Execute(context.Background(), o); err != nil {
		o.markClosed()
	}
}

// Run is the probe, on the loop.
func (o *outbox) Run(context.Context) error {
	o.mu.Lock()
	if !o.closed && !o.inflight {
		o.sampleSockLocked()
	}
	o.signalRoomLocked()
	o.mu.Unlock()
	return nil
}

// flushed reports whether everything committed has reached gnet and gnet's
// buffer was empty when last seen (or the connection is gone).
func (o *outbox) flushed() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.closed || (!o.inflight && len(o.buf) == 0 && o.sock.Load() == 0)
}
