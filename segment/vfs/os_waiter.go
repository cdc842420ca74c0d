package vfs

import (
	"sync"

	"github.com/felixbroker/felix/ring"
)

// ioBytesMax bounds the bytes one read or write Completion moves, as the
// drivers require: Res is an int32.
const ioBytesMax = ring.TransferBytesMax

// waiter turns a Driver's asynchronous completions into a blocking call.
// It holds the Completions of one call (at most a write linked to an
// fdatasync) and a channel their Done callbacks signal. Waiters are pooled,
// so a steady stream of calls allocates nothing.
type waiter struct {
	cs    [2]ring.Completion
	batch [2]*ring.Completion
	done  chan struct{} // capacity len(cs): Done never blocks
	lost  bool          // a Submit failed: never reuse this waiter
}

var waiterPool = sync.Pool{New: func() any { return newWaiter() }}

func newWaiter() *waiter {
	w := &waiter{}
	w.done = make(chan struct{}, len(w.cs))
	for i := range w.cs {
		w.cs[i].Done = w.complete // bound once, so no closure per call
		w.batch[i] = &w.cs[i]
	}
	return w
}

func getWaiter() *waiter { return waiterPool.Get().(*waiter) }

// release returns w to the pool, dropping its reference to the caller's
// buffer first. A lost waiter is left to the garbage collector.
func (w *waiter) release() {
	if w.lost {
		return
	}
	for i := range w.cs {
		w.cs[i].Buf = nil
	}
	waiterPool.Put(w)
}

func (w *waiter) complete(*ring.Completion) { w.done <- struct{}{} }

// set prepares Completion i.
func (w *waiter) set(i int, op ring.Op, fd int, buf []byte, off int64, link bool) {
	c := &w.cs[i]
	c.Op, c.FD, c.Buf, c.Off, c.Link, c.Res = op, fd, buf, off, link, 0
}

// run submits the first n Completions as one batch and waits until every
// one has completed. When Submit fails, w is marked lost: nothing says
// which of its Completions the driver might still signal.
func (w *waiter) run(d ring.Driver, n int) error {
	if err := d.Submit(w.batch[:n]); err != nil {
		w.lost = true
		return err
	}
	for range n {
		<-w.done
	}
	return nil
}

// do1 runs one operation and returns its Res, or its error.
func (w *waiter) do1(d ring.Driver, op ring.Op, fd int, buf []byte, off int64) (int, error) {
	w.set(0, op, fd, buf, off, false)
	if err := w.run(d, 1); err != nil {
		return 0, err
	}
	c := &w.cs[0]
	if err := c.Err(); err != nil {
		return 0, err
	}
	return int(c.Res), nil
}
