package netio

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"

	"github.com/panjf2000/gnet/v2"

	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/netio/wire"
)

// relayInKeepBytes is the largest inbound buffer a relay connection keeps
// between requests; a larger forwarded publish's is let go once handled.
const relayInKeepBytes = 256 << 10

// errRelayUnsupported answers the gnet.EventLoop methods a relay
// connection does not need.
var errRelayUnsupported = errors.New("felix/netio: not supported on a relay connection")

// relayTransport is the transport of a relay connection (relay.go): the
// conn through which this broker serves the requests one peer broker
// forwards for one client credential, exactly as it serves a client's.
// There is no socket. The inbound bytes are the forwarded requests, one
// frame at a time, which ServePeer copies into in under a request id of
// the relay's own (register); the outbound bytes are the conn's answers,
// which deliver splits back into frames, each handed to the peer.Reply
// registered under its request id.
//
// "The loop" is the loop mutex, as for TLS (tls_transport.go): ServePeer's
// traffic, write callbacks and runnables hold it, so conn and outbox run
// as on a gnet loop. Write is on the loop and delivers at once (an answer
// given during traffic reaches the peer before ServePeer returns), unless
// AsyncWrite bytes wait, which must go first. AsyncWrite's bytes and
// callbacks and Execute's runnables are taken by a writer goroutine, which
// delivers and runs them under the loop mutex; it also runs the server's
// close handling, once, when the connection closes.
//
// Lock order: loop, then the outbox's mu, then t.mu (a leaf). The fields
// under "the loop's" are touched only with loop held.
type relayTransport struct {
	remote relayAddr
	lim    wire.Limits // the server's: its answers are read back under them
	loop   sync.Mutex

	// the loop's
	in      []byte // the forwarded request being served; in[rpos:] not yet consumed
	rpos    int
	part    []byte                // the start of an answer a write cut short, until its rest comes
	pending map[uint64]peer.Reply // requests served and not yet answered, by the relay's request id
	lastID  uint64
	helloID uint64 // the synthesized HELLO's request id, until its answer
	greeted bool   // HELLO_OK came
	refusal []byte // the ERROR that refused HELLO
	closeBy []byte // an ERROR the connection sent with request id 0 (an expiry): why it closes
	onClose func() // the server's close handling (Server.closeRelay)

	inService atomic.Int64 // len(pending), for the sweep

	writerQueue // AsyncWrite's bytes and callbacks, Execute's runnables; its mu is the leaf lock
	writerDone  chan struct{}
}

// relayAddr is a relay connection's RemoteAddr: the broker it serves.
type relayAddr struct{ broker string }

func (a relayAddr) Network() string { return "peer" }
func (a relayAddr) String() string  { return "peer:" + a.broker }

func newRelayTransport(from string, lim wire.Limits) *relayTransport {
	t := &relayTransport{remote: relayAddr{from}, lim: lim, pending: map[uint64]peer.Reply{}, writerDone: make(chan struct{})}
	t.init()
	return t
}

// register keeps r as the answer to the request about to be served and
// returns the request id it goes under: unique on this connection, never
// 0 (a publish asking for an ack may not carry 0). Loop only.
func (t *relayTransport) register(r peer.Reply) uint64 {
	t.lastID++
	t.pending[t.lastID] = r
	t.inService.Add(1)
	return t.lastID
}

// feed puts one request frame, under id, where the conn's traffic reads
// it. Loop only.
func (t *relayTransport) feed(f wire.Frame, id uint64) {
	t.in = wire.AppendFrame(t.in[:0], f.Type, f.Flags, id, f.Body)
	t.rpos = 0
}

// drained lets go of what traffic consumed (all of it: requests come
// whole). Loop only.
func (t *relayTransport) drained() {
	if cap(t.in) > relayInKeepBytes {
		t.in = nil
	}
	t.in, t.rpos = t.in[:0], 0
}

// InboundBuffered, Peek and Discard read in; on the loop, in traffic.
func (t *relayTransport) InboundBuffered() int { return len(t.in) - t.rpos }

func (t *relayTransport) Peek(n int) ([]byte, error) {
	avail := t.in[t.rpos:]
	if n > len(avail) {
		return avail, io.ErrShortBuffer
	}
	return avail[:n], nil
}

func (t *relayTransport) Discard(n int) (int, error) {
	n = min(n, len(t.in)-t.rpos)
	t.rpos += n
	return n, nil
}

// Write delivers b at once, on the loop, unless AsyncWrite bytes wait for
// the writer: then b goes behind them. It never blocks.
func (t *relayTransport) Write(b []byte) (int, error) {
	t.mu.Lock()
	if t.dead {
		t.mu.Unlock()
		return 0, net.ErrClosed
	}
	if len(t.out) > 0 {
		t.acceptLocked(b)
		t.mu.Unlock()
		return len(b), nil
	}
	t.mu.Unlock()
	t.deliver(b)
	return len(b), nil
}

// Close delivers what was accepted, then has the writer run the server's
// close handling on the loop. Any goroutine, the loop included.
func (t *relayTransport) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closing && !t.dead {
		t.closing = true
		t.wake.Signal()
	}
	return nil
}

// closingNow reports whether Close was called. Any goroutine.
func (t *relayTransport) closingNow() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closing || t.dead
}

func (t *relayTransport) RemoteAddr() net.Addr { return t.remote }

// EventLoop is the connection's pseudo-loop: Execute runs a runnable on it.
func (t *relayTransport) EventLoop() gnet.EventLoop {
	return queueLoop{q: &t.writerQueue, unsupported: errRelayUnsupported}
}

// writeLoop is the writer goroutine: it delivers what AsyncWrite accepted
// and runs the callbacks and runnables, on the loop, until the connection
// closes with nothing left; then it runs the close handling.
func (t *relayTransport) writeLoop() {
	defer close(t.writerDone)
	for t.await() {
		t.loop.Lock()
		t.mu.Lock()
		buf, cbs, tasks := t.takeLocked()
		t.mu.Unlock()
		t.deliver(buf)
		t.outstanding.Add(-int64(len(buf)))
		runTaken(cbs, tasks)
		t.loop.Unlock()
		t.giveBack(buf, cbs)
	}
	t.finish()
}

// await waits for work; false once the connection is closing and nothing
// is left for the writer.
func (t *relayTransport) await() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for !t.closing && t.idleLocked() {
		t.wake.Wait()
	}
	return !t.idleLocked()
}

// finish closes the connection for good and runs the close handling on
// the loop.
func (t *relayTransport) finish() {
	t.loop.Lock()
	defer t.loop.Unlock()
	t.mu.Lock()
	t.dead = true
	t.mu.Unlock()
	if t.onClose != nil {
		t.onClose()
	}
}

// deliver splits the conn's outbound bytes into frames and answers each;
// a frame a write cut short waits in part for its rest (the outbox writes
// in pieces). Loop only.
func (t *relayTransport) deliver(b []byte) {
	if len(t.part) == 0 {
		n := t.answerFrames(b)
		t.part = append(t.part[:0], b[n:]...)
		return
	}
	t.part = append(t.part, b...)
	n := t.answerFrames(t.part)
	t.part = t.part[:copy(t.part, t.part[n:])]
	if len(t.part) == 0 && cap(t.part) > relayInKeepBytes {
		t.part = nil
	}
}

// answerFrames answers every whole frame at the start of b and returns
// the bytes they took. The frames are this server's own answers; one the
// Reader refuses cannot happen, and would take the rest with it.
func (t *relayTransport) answerFrames(b []byte) int {
	r := wire.Reader{Limits: t.lim}
	done := 0
	for done < len(b) {
		f, need, err := r.Next(b[done:])
		if err != nil {
			return len(b)
		}
		if need > 0 {
			break
		}
		t.answer(f, b[done:done+f.Size()])
		done += f.Size()
	}
	return done
}

// answer hands one answer frame to the request it answers: the HELLO's
// settles the connection; one with request id 0 (an ERROR the connection
// sends as it closes: a token expired) says why requests still waiting
// will not be answered; any other goes to its Reply, which copies it and
// writes the FORWARD's own request id. Loop only.
func (t *relayTransport) answer(f wire.Frame, frame []byte) {
	switch {
	case t.helloID != 0 && f.RequestID == t.helloID:
		t.helloID = 0
		if f.Type == wire.TypeHelloOK {
			t.greeted = true
		} else {
			t.refusal = append([]byte(nil), frame...)
		}
	case f.RequestID == 0:
		if f.Type == wire.TypeError {
			t.closeBy = append(t.closeBy[:0], frame...)
		}
	default:
		r, ok := t.pending[f.RequestID]
		if !ok {
			return
		}
		delete(t.pending, f.RequestID)
		t.inService.Add(-1)
		_ = r.Answer(frame)
	}
}

// failPending answers every request still waiting when the connection
// closes: each was taken on (it may have been applied) and its answer
// will never come, so timeout, with why the connection closed. Loop only.
func (t *relayTransport) failPending() {
	if len(t.pending) == 0 {
		return
	}
	why := "it closed"
	if len(t.closeBy) > 0 {
		f, _, _ := (&wire.Reader{Limits: t.lim}).Next(t.closeBy)
		why = leaderError(f).Error()
	}
	frame := wire.AppendError(nil, 0, &wire.Error{Code: wire.CodeTimeout,
		Message: "the leader's relay connection closed before answering (the request may have been applied): " + why})
	for id, r := range t.pending {
		_ = r.Answer(frame)
		delete(t.pending, id)
	}
	t.inService.Store(0)
}
