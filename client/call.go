package client

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/felixbroker/felix/netio/wire"
)

// call is one request awaiting its answer. The reader goroutine (or the
// connection's death) completes it exactly once; its waiter then reads the
// result. A waiter that gives up (its context ended) abandons it, and the
// completer recycles it instead.
type call struct {
	id    uint64
	state atomic.Uint32 // callWaiting, callAbandoned, callCompleted
	done  chan struct{} // capacity 1: signalled once per use (sync waiters)

	// future, when set, is completed instead of signalling done.
	future *PublishFuture
	// sub, when set, is registered under SUBSCRIBED's id before the reader
	// goroutine reads the next frame.
	sub *Subscription
	// pooled: return to callPool once both sides are done with it.
	pooled bool

	// Results, written by the completer before it signals.
	err   error
	runs  []wire.AckRun
	want  uint64 // records a publish acknowledges in total
	got   uint64
	ftype wire.Type
	body  []byte // a copy of a control answer's body
}

const (
	callWaiting uint32 = iota
	callAbandoned
	callCompleted
)

var callPool = sync.Pool{New: func() any { return &call{done: make(chan struct{}, 1)} }}

func newCall(pooled bool) *call {
	if !pooled {
		return &call{done: make(chan struct{}, 1)}
	}
	c := callPool.Get().(*call)
	c.pooled = true
	return c
}

// recycle resets the call and pools it (calls that belong to a future or a
// subscription are left to the garbage collector).
func (c *call) recycle() {
	if !c.pooled {
		return
	}
	runs := c.runs[:0]
	*c = call{done: c.done, runs: runs}
	callPool.Put(c)
}

// complete records the outcome; called once, by the completer.
func (c *call) complete(err error) {
	if c.err == nil {
		c.err = err
	}
	if f := c.future; f != nil {
		f.finish(c)
		return
	}
	if c.state.CompareAndSwap(callWaiting, callCompleted) {
		c.done <- struct{}{}
		return
	}
	c.recycle() // abandoned: nobody will read it
}

// wait blocks until the call completes or ctx ends. On ctx's end the call
// is abandoned (the answer, when it comes, is dropped and the completer
// recycles the call: the waiter must not touch it again) unless it
// completed in the meantime.
func (c *call) wait(ctx context.Context) (abandoned bool, err error) {
	select {
	case <-c.done:
		return false, c.err
	case <-ctx.Done():
	}
	if c.state.CompareAndSwap(callWaiting, callAbandoned) {
		return true, ctx.Err()
	}
	<-c.done // completed as we gave up: take the answer after all
	return false, c.err
}
