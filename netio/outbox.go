package netio

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/felixbroker/felix/engine"
)

// outboxKeepBytes is the largest buffer an outbox keeps for reuse; a
// bigger one (after a burst of events) goes back to the garbage collector.
const outboxKeepBytes = 256 << 10

// Polling bounds while a subscriber, or the outbox itself, waits for a
// full socket to drain: gnet says nothing when its outbound buffer empties,
// so the loop is asked again after these delays, doubling.
const (
	drainPollFirst = time.Millisecond
	drainPollMax   = 32 * time.Millisecond
)

// How the outbox hands bytes to gnet, whose outbound buffer copies what the
// socket does not take at once into pooled pieces of power-of-two sizes (a
// write of 257 KiB takes 512), one piece and one list node per write.
const (
	// writeChunkBytes is the largest piece one write hands gnet: a power of
	// two, so gnet's copy of a whole piece wastes nothing and only a
	// write's last piece is rounded up.
	writeChunkBytes = 256 << 10
	// sockBacklogBytesMax: while gnet holds more than this of the
	// connection's bytes (as last sampled on the loop), the outbox hands it
	// nothing more; frames wait in the outbox's own buffer, and the loop
	// samples gnet again after drainPollFirst, doubling to drainPollMax. It
	// bounds what gnet's rounding and nodes add for small writes to a few
	// times this.
	sockBacklogBytesMax = 256 << 10
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
// Answers a shard log's committer gives with a flush's batch (commitIn)
// wait for the end of the flush, then leave in one write (FlushAcks).
// After a flush that waited for its fdatasync and answers this connection
// alone, the committer writes them itself, straight to the socket, when
// nothing else is on its way to it (writeDirectLocked): the loop has long
// gone back to sleep by then, and waking it to write one ack costs more
// than the write. Otherwise the loop writes (gnet's AsyncWrite): after a
// page-cache flush it has not gone to sleep yet, and the acks of several
// connections are written by their loops alongside the committer's next
// flush.
//
// used() is the connection's outbound budget: bytes committed and not yet
// written into gnet (queued) plus gnet's own outbound buffer as last seen on
// the loop (sock). Deliverers pull events only while it is below the
// budget; answers are always accepted, and a connection whose answers pile
// past twice the budget plus a frame is closed (a client that sends and
// never reads). That cap counts the outbox's buffers at their capacity and
// gnet's bytes, so it bounds memory, not only bytes: gnet's copies add at
// most a few sockBacklogBytesMax to it, as the outbox writes to gnet in
// pieces and only while gnet's backlog is under sockBacklogBytesMax.
type outbox struct {
	gc        transport
	budget    int
	hardCap   int
	metrics   *Metrics
	writtenFn gnet.AsyncCallback // o.written, bound once
	fd        int                // a gnet connection's socket, for direct writes (set at OnOpen); -1: none

	mu         sync.Mutex
	buf        []byte // committed frames not yet handed to gnet
	spare      []byte // an empty buffer to swap in
	writing    []byte // the buffer gnet is writing
	inflight   bool   // writing is with gnet (an AsyncWrite queued, or a Write on the loop)
	deferred   bool   // the loop is in OnTraffic and flushes when it returns
	closeAfter bool   // close the connection once everything is written
	closed     bool   // the connection is gone: commits are dropped
	batched    bool   // deferred to a flush's AckBatch: FlushAcks writes buf
	room       chan struct{}
	holdTimer  *time.Timer   // probes the loop while buf waits for gnet's backlog to shrink
	holdPoll   time.Duration // the next hold's delay
	holding    bool          // holdTimer is set and has not run its probe yet
	committed  bool          // frames were committed since the last sweep (trimIdle)

	queued atomic.Int64 // len(buf) + len(writing)
	sock   atomic.Int64 // gnet's outbound buffer, sampled on the loop
	peak   atomic.Int64 // high-water mark of used()
}

func newOutbox(gc transport, budget, frameMax int, m *Metrics) *outbox {
	o := &outbox{gc: gc, budget: budget, hardCap: 2*budget + frameMax, metrics: m, fd: -1}
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
	if !o.takeLocked(b) {
		return
	}
	o.kickLocked()
	o.unlockOverCap()
}

// commitIn is commit for an answer a log's committer gives with the flush's
// batch: the write waits for FlushAcks, after the flush's last answer,
// unless one is already on its way (in flight, or the loop's own flush on
// its way out of OnTraffic), which will carry these frames too.
func (o *outbox) commitIn(b []byte, batch *engine.AckBatch) {
	if !o.takeLocked(b) {
		return
	}
	if !o.inflight && !o.deferred && !o.batched {
		o.batched = true
		batch.Defer(o)
	}
	o.unlockOverCap()
}

// takeLocked keeps the frames appended to b (from begin), counted against
// the outbound budget, and reports true; once the connection is closing it
// drops them, releases mu and reports false.
func (o *outbox) takeLocked(b []byte) bool {
	if o.closed || o.closeAfter {
		o.buf = b[:len(o.buf)]
		o.mu.Unlock()
		return false
	}
	o.account(len(b) - len(o.buf))
	o.buf = b
	o.committed = true
	return true
}

// unlockOverCap releases mu and aborts the connection when what it holds
// unsent passed the hard cap.
func (o *outbox) unlockOverCap() {
	over := o.heldLocked() > int64(o.hardCap)
	o.mu.Unlock()
	if over {
		o.abort()
	}
}

// commitDirect is commit for an answer given off the loop, long after the
// loop went back to waiting: a forwarded request's, told by the peer
// transport's reader a round trip to the leader later. It writes straight
// to the socket from the calling goroutine when nothing else is on its
// way (writeDirectLocked), as FlushAcks does after an fdatasync, and
// hands gnet only what the socket did not take: no loop wake-up, and
// nothing allocated (gnet's AsyncWrite allocates its task). On the loop
// in OnTraffic it is commit: the loop's flush writes.
func (o *outbox) commitDirect(b []byte) {
	if !o.takeLocked(b) {
		return
	}
	if !o.inflight && !o.deferred {
		o.writeDirectLocked()
	}
	o.kickLocked()
	o.unlockOverCap()
}

// FlushAcks writes what the flush's answers committed: straight to the
// socket from the committer when ackDirect says so and it can, the rest
// through gnet.
func (o *outbox) FlushAcks(f engine.FlushInfo) {
	o.mu.Lock()
	o.batched = false
	if !o.closed && !o.inflight && !o.deferred {
		if ackDirect(f) {
			o.writeDirectLocked()
		}
		o.kickLocked()
	}
	o.mu.Unlock()
}

// ackDirect is whether the committer writes a flush's acks to a connection
// itself: after an fdatasync, for a flush that answers this connection
// alone. Then the loop has gone back to sleep and a direct write saves its
// wake-up. After a page-cache flush it is still awake and writes sooner than
// a direct write, whose wake-up of the client's reader then waits for the
// processor the loop holds in epoll_wait; and a committer that wrote the
// acks of many connections in turn would delay its next flush by as much.
// Measured: docs/benchmarks.md, History, "Publish: what changed". A
// replicated shard's leader tells its acks on a follower's answer, on no
// log's committer and a round trip after the loop went on: it writes each
// connection's acks itself, as it wrote each ack before they were batched.
func ackDirect(f engine.FlushInfo) bool { return f.Replicated || (f.Synced && f.Flushers == 1) }

// writeDirectLocked writes buf to the socket from the calling goroutine,
// once, taking out what the socket took. It may only when nothing else is
// on its way to the socket: no write with gnet (inflight), none the loop
// is about to make (deferred), and gnet's outbound buffer empty when last
// sampled (it is sampled after every write handed to gnet, before inflight
// is cleared, so 0 means empty; a stale non-zero only forgoes a direct
// write). mu is held throughout, and gnet calls OnClose (which takes mu)
// before it closes the descriptor, so fd is this connection's socket while
// closed is false. What the socket does not take (it is full, or the write
// failed) stays in buf for gnet, whose write then blocks nothing and
// reports any error on the loop.
func (o *outbox) writeDirectLocked() {
	if o.fd < 0 || len(o.buf) == 0 || o.sock.Load() != 0 {
		return
	}
	n := writeFD(o.fd, o.buf)
	if n == 0 {
		return
	}
	o.account(-n)
	o.metrics.BytesOut.Add(uint64(n))
	o.buf = o.buf[:copy(o.buf, o.buf[n:])]
}

// heldLocked is the memory the connection's unsent frames take: the
// outbox's buffers at their capacity and gnet's backlog as last sampled.
func (o *outbox) heldLocked() int64 {
	return int64(cap(o.buf)+cap(o.writing)) + o.sock.Load()
}

// trimIdle drops the buffers the outbox keeps for reuse (up to
// outboxKeepBytes each) once a sweep finds nothing committed since the one
// before and nothing waiting: otherwise every connection that once had a
// burst of answers would keep half a MiB for as long as it stays open.
// Called by the sweep.
func (o *outbox) trimIdle() {
	o.mu.Lock()
	if !o.committed && !o.inflight && !o.deferred && len(o.buf) == 0 {
		o.buf, o.spare = nil, nil
	}
	o.committed = false
	o.mu.Unlock()
}

// account moves the queued count and the server-wide gauge by delta.
func (o *outbox) account(delta int) {
	q := o.queued.Add(int64(delta))
	o.metrics.OutboundBuffered.Add(int64(delta))
	if u := q + o.sock.Load(); u > o.peak.Load() {
		o.peak.Store(u)
	}
}

// kickLocked hands buf to gnet unless a write is already on its way, the
// loop will flush on its way out of OnTraffic, or gnet's backlog is over
// its mark (then buf is held). The first piece goes with AsyncWrite, the
// rest from its callback, on the loop.
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
	if !o.sockHasRoomLocked() {
		o.holdLocked(false)
		return
	}
	o.inflight = true
	o.writing = o.swapLocked()
	if err := o.gc.AsyncWrite(o.writing[:min(len(o.writing), writeChunkBytes)], o.writtenFn); err != nil {
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

// written is the AsyncWrite callback, on the loop: gnet has sent the
// buffer's first piece or copied it into its outbound buffer; the rest
// follows in pieces.
func (o *outbox) written(_ gnet.Conn, err error) error {
	o.mu.Lock()
	rest := o.writing[min(len(o.writing), writeChunkBytes):] // writing is ours while inflight
	o.mu.Unlock()
	if err == nil && len(rest) > 0 {
		err = writePieces(o.gc, rest) // may close the connection: OnClose takes mu
	}
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
// until it is empty or gnet's backlog passes its mark (then buf is held),
// samples gnet's outbound buffer, closes the connection if asked to, wakes
// waiting deliverers, and unlocks.
func (o *outbox) drainLocked() {
	wrote := false
	for len(o.buf) > 0 && !o.closed && o.sockHasRoomLocked() {
		o.writing = o.swapLocked()
		o.mu.Unlock()
		err := writePieces(o.gc, o.writing) // may close the connection: OnClose takes mu
		o.mu.Lock()
		o.doneWritingLocked()
		if err != nil {
			o.closeLocked()
		}
		if !o.closed {
			o.sampleSockLocked()
		}
		wrote = true
	}
	o.inflight = false
	o.settleLocked(wrote)
	o.signalRoomLocked()
	o.mu.Unlock()
}

// settleLocked ends a drain: it samples gnet's buffer if nothing was
// written, holds what gnet's backlog left in buf, or closes the connection
// if asked to and nothing is left.
func (o *outbox) settleLocked(wrote bool) {
	if o.closed {
		return
	}
	if !wrote {
		o.sampleSockLocked()
	}
	if len(o.buf) > 0 {
		o.holdLocked(wrote)
		return
	}
	if o.closeAfter {
		_ = o.gc.Close()
	}
}

// sockHasRoomLocked reports whether gnet may be handed more: its backlog as
// last sampled (never less than it is: only the outbox's own writes add to
// it, and each is sampled after) is within its mark, or the connection is
// closing and everything goes.
func (o *outbox) sockHasRoomLocked() bool {
	return o.closeAfter || o.sock.Load() <= sockBacklogBytesMax
}

// holdLocked keeps buf while gnet's backlog is over its mark and asks the
// loop to look again after a while (gnet says nothing when its buffer
// drains): drainPollFirst after a write, doubling while nothing is. A
// probe already on its way is left alone, so commits cannot keep putting
// it off.
func (o *outbox) holdLocked(wrote bool) {
	if o.holding {
		return
	}
	o.holding = true
	if wrote || o.holdPoll == 0 {
		o.holdPoll = drainPollFirst
	} else {
		o.holdPoll = min(2*o.holdPoll, drainPollMax)
	}
	if o.holdTimer == nil {
		o.holdTimer = time.AfterFunc(o.holdPoll, o.probe)
		return
	}
	o.holdTimer.Reset(o.holdPoll)
}

// writePieces writes b in pieces of at most writeChunkBytes. On the loop.
func writePieces(t transport, b []byte) error {
	for len(b) > 0 {
		n := min(len(b), writeChunkBytes)
		if _, err := t.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
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
	if o.holdTimer != nil {
		o.holdTimer.Stop()
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

// Run is the probe, on the loop: it samples gnet's buffer and writes what
// the outbox held for it.
func (o *outbox) Run(context.Context) error {
	o.mu.Lock()
	o.holding = false
	if o.closed || o.inflight {
		o.signalRoomLocked()
		o.mu.Unlock()
		return nil
	}
	o.sampleSockLocked()
	o.inflight = true
	o.drainLocked()
	return nil
}

// flushed reports whether everything committed has reached gnet and gnet's
// buffer was empty when last seen (or the connection is gone).
func (o *outbox) flushed() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.closed || (!o.inflight && len(o.buf) == 0 && o.sock.Load() == 0)
}
