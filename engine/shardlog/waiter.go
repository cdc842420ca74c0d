package shardlog

import "sync"

// Waiter is told once when an append's records are acknowledged at the
// log's FsyncMode (err nil), or have failed (err set; nothing of the append
// may be assumed durable). Committed is called on the log's committer
// goroutine: it must not block and must not call Append.
type Waiter interface {
	Committed(first, last int64, err error)
}

// pending is one append waiting for its acknowledgement.
type pending struct {
	first, last int64
	w           Waiter
}

// waitQueue is a FIFO of pending appends in offset order: a ring that grows
// and never shrinks, so steady state allocates nothing.
type waitQueue struct {
	buf  []pending
	head int
	n    int
}

func (q *waitQueue) push(p pending) {
	if q.n == len(q.buf) {
		q.grow()
	}
	q.buf[(q.head+q.n)%len(q.buf)] = p
	q.n++
}

func (q *waitQueue) grow() {
	next := make([]pending, max(64, 2*len(q.buf)))
	for i := range q.n {
		next[i] = q.buf[(q.head+i)%len(q.buf)]
	}
	q.buf, q.head = next, 0
}

// popThrough moves every pending append whose last offset is below end
// into dst and returns it.
func (q *waitQueue) popThrough(end int64, dst []pending) []pending {
	for q.n > 0 && q.buf[q.head].last < end {
		dst = append(dst, q.buf[q.head])
		q.buf[q.head] = pending{}
		q.head = (q.head + 1) % len(q.buf)
		q.n--
	}
	return dst
}

// popAll moves every pending append into dst.
func (q *waitQueue) popAll(dst []pending) []pending {
	return q.popThrough(1<<63-1, dst)
}

// chanWaiter turns the callback into something a goroutine can wait on.
type chanWaiter struct {
	ch chan error
}

func (c *chanWaiter) Committed(_, _ int64, err error) { c.ch <- err }

var chanWaiters = sync.Pool{New: func() any { return &chanWaiter{ch: make(chan error, 1)} }}
