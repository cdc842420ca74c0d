package peer

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/felixbroker/felix/netio/wire"
)

// starter is what Transport.Call needs of an implementation: send c,
// waiting within ctx for room, and say which link holds it; and its pool
// of waiters.
type starter interface {
	start(ctx context.Context, c *Call, wait bool) (*core, error)
	waiters() *waiterPool
}

// waiter is a synchronous Call's record, pooled. Its completer (the
// transport goroutine that runs Done) and its waiter race only through
// state: whoever loses the race leaves the record to the other, who pools
// it once both are done with it.
type waiter struct {
	call  Call
	state atomic.Uint32 // waiting, abandoned, completed
	done  chan struct{} // capacity 1: the completer's signal
	buf   []byte        // the caller's dst; the answer's body goes here
	ans   wire.Frame
	err   error
	pool  *waiterPool
}

const (
	waiting uint32 = iota
	abandoned
	completed
)

// waiterPool is one transport's pool of waiters. Each transport has its
// own: a channel belongs to the synctest bubble it was made in, and a
// Network made in a bubble must never meet a waiter made outside it.
type waiterPool struct{ p sync.Pool }

func (wp *waiterPool) get() *waiter {
	if w, ok := wp.p.Get().(*waiter); ok {
		return w
	}
	w := &waiter{done: make(chan struct{}, 1), pool: wp}
	w.call.Done = w.complete
	return w
}

func (w *waiter) recycle() {
	w.state.Store(waiting)
	w.call.To, w.call.Request = "", nil
	w.buf, w.ans, w.err = nil, wire.Frame{}, nil
	w.pool.p.Put(w)
}

// complete is Done: it copies the answer for a waiter still waiting, or
// pools the record of one that gave up.
func (w *waiter) complete(_ *Call, answer wire.Frame, err error) {
	if !w.state.CompareAndSwap(waiting, completed) {
		w.recycle()
		return
	}
	w.err = err
	if err == nil {
		w.ans = answer
		w.ans.Body = append(w.buf[:0], answer.Body...)
	}
	w.done <- struct{}{}
}

// callSync is Transport.Call on any implementation.
func callSync(ctx context.Context, s starter, to string, req, dst []byte) (wire.Frame, error) {
	w := s.waiters().get()
	w.call.To, w.call.Request, w.buf = to, req, dst
	k, err := s.start(ctx, &w.call, true)
	if err != nil {
		w.recycle()
		return wire.Frame{}, err
	}
	select {
	case <-w.done:
		return w.result()
	case <-ctx.Done():
	}
	if !w.state.CompareAndSwap(waiting, abandoned) {
		<-w.done // completed as ctx ended: take the answer after all
		return w.result()
	}
	k.mu.Lock()
	mine := k.cancelLocked(&w.call)
	k.mu.Unlock()
	if mine {
		w.recycle() // nobody else holds it
	} // else its completer has it, and pools it
	return wire.Frame{}, unknown(to, ctx.Err())
}

func (w *waiter) result() (wire.Frame, error) {
	ans, err := w.ans, w.err
	w.recycle()
	return ans, err
}
