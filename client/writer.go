package client

import (
	"context"
	"net"
	"sync"
	"time"
)

// writer puts frames on the socket for many goroutines at once, coalescing
// what they append while a write is under way into the next write.
//
// A caller appends its frame between begin and commit (or abort), under mu.
// If no write is under way, commit writes the buffer itself: an idle
// connection costs one write and no goroutine hand-off. Frames appended
// meanwhile are written by the flusher goroutine, so no caller writes other
// callers' frames for ever. A caller that does not wait for its answer (an
// asynchronous publish while others are in flight) commits with
// commitAsync instead: the flusher writes, and the frames one producer
// appends while that write is under way go out together in the next one,
// rather than one write system call per frame. The buffer is bounded:
// begin waits while it holds bufMax bytes or more.
type writer struct {
	nc      net.Conn
	timeout time.Duration
	bufMax  int
	onError func(error) // the connection dies; called without mu

	mu       sync.Mutex
	buf      []byte        // frames waiting to be written
	spare    []byte        // the other buffer, swapped in while one is written
	flushing bool          // a write is under way (by a caller or the flusher)
	drained  chan struct{} // closed when the buffer is taken; nil if none waits
	err      error         // the first write error; later writes fail with it

	kick     chan struct{} // capacity 1: wakes the flusher
	stop     chan struct{} // closed when the connection dies
	stopOnce sync.Once
}

// spareKeepBytes bounds the buffer kept for reuse after a large write.
const spareKeepBytes = 1 << 20

func newWriter(nc net.Conn, timeout time.Duration, bufMax int, onError func(error)) *writer {
	w := &writer{nc: nc, timeout: timeout, bufMax: bufMax, onError: onError,
		kick: make(chan struct{}, 1), stop: make(chan struct{})}
	go w.flusher()
	return w
}

// begin locks the writer and returns the buffer to append one frame to. It
// waits while the buffer is full, within ctx; a ctx that is done, or ends
// while it waits, is an ErrNotSent error: the frame was not written. On
// error mu is not held.
func (w *writer) begin(ctx context.Context) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, notSent(err)
	}
	w.mu.Lock()
	for w.err == nil && len(w.buf) >= w.bufMax {
		if w.drained == nil {
			w.drained = make(chan struct{})
		}
		ch := w.drained
		w.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, notSent(ctx.Err())
		}
		w.mu.Lock()
	}
	if w.err != nil {
		err := w.err
		w.mu.Unlock()
		return nil, err
	}
	return w.buf, nil
}

// beginNow is begin without the wait for room: for the small frames the
// reader goroutine sends. On error mu is not held.
func (w *writer) beginNow() ([]byte, error) {
	w.mu.Lock()
	if w.err != nil {
		err := w.err
		w.mu.Unlock()
		return nil, err
	}
	return w.buf, nil
}

// abort gives the buffer back unchanged (cut to its length before begin's
// caller appended) and unlocks.
func (w *writer) abort(buf []byte) {
	w.buf = buf
	w.mu.Unlock()
}

// commit stores the appended buffer and unlocks; if no write is under way
// it writes now, on the caller's goroutine.
func (w *writer) commit(buf []byte) {
	w.buf = buf
	if w.flushing {
		w.mu.Unlock()
		return
	}
	w.flushing = true
	err := w.writeOnce()
	if err == nil && len(w.buf) > 0 {
		w.mu.Unlock()
		w.kick <- struct{}{} // the flusher takes over; flushing stays set
		return
	}
	w.flushing = false
	w.mu.Unlock()
	if err != nil {
		w.onError(err)
	}
}

// commitAsync stores the appended buffer and unlocks, leaving the write to
// the flusher: for the reader goroutine, which must never block in a write
// (a broker blocked writing to a client that is blocked writing to it
// would deadlock them both), and for asynchronous publishes, whose frames
// gather while the flusher writes.
func (w *writer) commitAsync(buf []byte) {
	w.buf = buf
	if w.flushing {
		w.mu.Unlock()
		return
	}
	w.flushing = true
	w.mu.Unlock()
	w.kick <- struct{}{}
}

// writeOnce takes the buffer and writes it; mu held on entry and on return.
func (w *writer) writeOnce() error {
	out := w.buf
	w.buf = w.spare[:0]
	w.spare = nil
	if w.drained != nil {
		close(w.drained)
		w.drained = nil
	}
	w.mu.Unlock()
	var err error
	if w.timeout > 0 {
		err = w.nc.SetWriteDeadline(time.Now().Add(w.timeout))
	}
	if err == nil {
		_, err = w.nc.Write(out)
	}
	w.mu.Lock()
	if cap(out) <= spareKeepBytes {
		w.spare = out[:0]
	}
	if err != nil && w.err == nil {
		w.err = err
	}
	return w.err
}

// flusher writes what accumulated while a caller's write was under way.
func (w *writer) flusher() {
	for {
		select {
		case <-w.kick:
		case <-w.stop:
			return
		}
		w.mu.Lock()
		var err error
		for err == nil && len(w.buf) > 0 {
			err = w.writeOnce()
		}
		w.flushing = false
		w.mu.Unlock()
		if err != nil {
			w.onError(err)
		}
	}
}

// fail makes every later begin fail with err and stops the flusher.
func (w *writer) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	if w.drained != nil {
		close(w.drained)
		w.drained = nil
	}
	w.mu.Unlock()
	w.stopOnce.Do(func() { close(w.stop) })
}
