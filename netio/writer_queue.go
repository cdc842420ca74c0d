package netio

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
)

// writerQueue is what a transport served by goroutines rather than a gnet
// loop (TLS, the relay) hands its writer goroutine: the bytes AsyncWrite
// accepted, their callbacks, and the runnables Execute was given, all
// taken at once. It never blocks a caller. mu is a leaf lock: nothing is
// called while it is held.
type writerQueue struct {
	mu          sync.Mutex
	wake        *sync.Cond // on mu: work for the writer, closing, or dead
	out         []byte     // accepted bytes waiting for the writer
	spare       []byte
	cbs         []gnet.AsyncCallback // callbacks of AsyncWrites whose bytes are in out
	cbsSpare    []gnet.AsyncCallback
	tasks       []gnet.Runnable
	closing     bool  // Close was called: write what is accepted, then close
	dead        bool  // closed: nothing more is accepted
	deadErr     error // why, for the callers refused (nil: net.ErrClosed)
	outstanding atomic.Int64
}

func (q *writerQueue) init() { q.wake = sync.NewCond(&q.mu) }

// deadError is what a write or a runnable offered to a dead queue gets.
func (q *writerQueue) deadError() error {
	if q.deadErr != nil {
		return q.deadErr
	}
	return net.ErrClosed
}

// AsyncWrite copies b for the writer, which calls callback on the loop
// once it has the bytes (b is free once copied, as gnet's is once it is
// in its outbound buffer). Any goroutine; never blocks.
func (q *writerQueue) AsyncWrite(b []byte, callback gnet.AsyncCallback) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.dead {
		return q.deadError()
	}
	q.acceptLocked(b)
	if callback != nil {
		q.cbs = append(q.cbs, callback)
	}
	return nil
}

func (q *writerQueue) acceptLocked(b []byte) {
	q.out = append(q.out, b...)
	q.outstanding.Add(int64(len(b)))
	q.wake.Signal()
}

// OutboundBuffered is what was accepted and the writer has not yet
// finished with.
func (q *writerQueue) OutboundBuffered() int { return int(q.outstanding.Load()) }

// execute queues r for the writer, which runs it on the loop.
func (q *writerQueue) execute(r gnet.Runnable) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.dead {
		return q.deadError()
	}
	q.tasks = append(q.tasks, r)
	q.wake.Signal()
	return nil
}

// idleLocked reports whether nothing waits for the writer.
func (q *writerQueue) idleLocked() bool {
	return len(q.out) == 0 && len(q.cbs) == 0 && len(q.tasks) == 0
}

// takeLocked takes everything that waits, leaving the spare buffers in
// its place.
func (q *writerQueue) takeLocked() ([]byte, []gnet.AsyncCallback, []gnet.Runnable) {
	buf, cbs, tasks := q.out, q.cbs, q.tasks
	q.out, q.spare = q.spare[:0], nil
	q.cbs, q.cbsSpare = q.cbsSpare[:0], nil
	q.tasks = nil
	return buf, cbs, tasks
}

// giveBack keeps a written buffer and a callback list for reuse.
func (q *writerQueue) giveBack(buf []byte, cbs []gnet.AsyncCallback) {
	clear(cbs)
	q.mu.Lock()
	if cap(buf) <= outboxKeepBytes {
		q.spare = buf[:0]
	}
	q.cbsSpare = cbs[:0]
	q.mu.Unlock()
}

// runTaken runs what takeLocked gave: the callbacks, then the runnables.
// The caller holds the loop.
func runTaken(cbs []gnet.AsyncCallback, tasks []gnet.Runnable) {
	for _, cb := range cbs {
		_ = cb(nil, nil)
	}
	for _, r := range tasks {
		_ = r.Run(context.Background())
	}
}

// queueLoop is the gnet.EventLoop of a transport served by goroutines:
// only Execute is used, and runs the runnable on the loop from the
// writer goroutine; the rest answer unsupported.
type queueLoop struct {
	q           *writerQueue
	unsupported error
}

func (l queueLoop) Execute(_ context.Context, r gnet.Runnable) error { return l.q.execute(r) }

func (l queueLoop) Register(context.Context, net.Addr) (<-chan gnet.RegisteredResult, error) {
	return nil, l.unsupported
}

func (l queueLoop) Enroll(context.Context, net.Conn) (<-chan gnet.RegisteredResult, error) {
	return nil, l.unsupported
}

func (l queueLoop) Schedule(context.Context, gnet.Runnable, time.Duration) error {
	return l.unsupported
}

func (l queueLoop) Close(gnet.Conn) error { return l.unsupported }
