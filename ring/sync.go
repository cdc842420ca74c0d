package ring

import (
	"fmt"
	"io"
)

// The synchronous helpers submit through a Driver and wait for the
// completion, for callers that must wait anyway (the storage engine's
// committer, reads). They allocate nothing in steady state: each call
// borrows a waiter (its Completions and the channel their Done signals)
// from a bounded free list. They must not be called from a Done callback:
// the goroutine that would complete them is the one waiting.

// waiterPoolMax bounds the idle waiters kept for reuse.
const waiterPoolMax = 64

type waiter struct {
	cs    [2]Completion
	batch [2]*Completion
	done  chan struct{}
}

var idleWaiters = make(chan *waiter, waiterPoolMax)

func getWaiter() *waiter {
	select {
	case w := <-idleWaiters:
		return w
	default:
	}
	w := &waiter{}
	w.done = make(chan struct{}, len(w.cs))
	signal := w.signal
	for i := range w.cs {
		w.cs[i].Done = signal
		w.batch[i] = &w.cs[i]
	}
	return w
}

func putWaiter(w *waiter) {
	for i := range w.cs {
		w.cs[i].Buf = nil // keep no caller memory alive
	}
	select {
	case idleWaiters <- w:
	default:
	}
}

func (w *waiter) signal(*Completion) { w.done <- struct{}{} }

// run submits the first n Completions as one batch and waits for them all.
func (w *waiter) run(d Driver, n int) error {
	if err := d.Submit(w.batch[:n]); err != nil {
		return err
	}
	for range n {
		<-w.done
	}
	return nil
}

func (w *waiter) set(i int, op Op, fd int, off int64, buf []byte, link bool) *Completion {
	c := &w.cs[i]
	c.Op, c.FD, c.Off, c.Buf, c.Link, c.Res = op, fd, off, buf, link, 0
	return c
}

func chunk(p []byte, done int) []byte {
	return p[done:min(len(p), done+TransferBytesMax)]
}

func opError(op Op, off int64, c *Completion) error {
	return errnoError(op, off, c.Err())
}

func errnoError(op Op, off int64, err error) error {
	return fmt.Errorf("felix/ring: %v at offset %d: %w", op, off, err)
}

// WriteAt writes all of p at off, going on after short writes. It returns
// the bytes written and the error that stopped it, io.ErrShortWrite when
// the file took nothing. A Blocking driver runs it its own way.
func WriteAt(d Driver, fd int, p []byte, off int64) (int, error) {
	if b, ok := d.(Blocking); ok {
		return b.WriteAt(fd, p, off)
	}
	return writeAtSubmit(d, fd, p, off)
}

func writeAtSubmit(d Driver, fd int, p []byte, off int64) (int, error) {
	w := getWaiter()
	defer putWaiter(w)
	total := 0
	for total < len(p) {
		at := off + int64(total)
		c := w.set(0, OpWrite, fd, at, chunk(p, total), false)
		if err := w.run(d, 1); err != nil {
			return total, err
		}
		if c.Res < 0 {
			return total, opError(OpWrite, at, c)
		}
		if c.Res == 0 {
			return total, io.ErrShortWrite
		}
		total += int(c.Res)
	}
	return total, nil
}

// ReadAt reads len(p) bytes at off, like os.File.ReadAt: fewer bytes come
// with an error, io.EOF at the end of the file. A Blocking driver runs it
// its own way.
func ReadAt(d Driver, fd int, p []byte, off int64) (int, error) {
	if b, ok := d.(Blocking); ok {
		return b.ReadAt(fd, p, off)
	}
	return readAtSubmit(d, fd, p, off)
}

func readAtSubmit(d Driver, fd int, p []byte, off int64) (int, error) {
	w := getWaiter()
	defer putWaiter(w)
	total := 0
	for total < len(p) {
		at := off + int64(total)
		c := w.set(0, OpRead, fd, at, chunk(p, total), false)
		if err := w.run(d, 1); err != nil {
			return total, err
		}
		if c.Res < 0 {
			return total, opError(OpRead, at, c)
		}
		if c.Res == 0 {
			return total, io.EOF
		}
		total += int(c.Res)
	}
	return total, nil
}

// Fdatasync makes fd's written data durable. A Blocking driver runs it its
// own way.
func Fdatasync(d Driver, fd int) error {
	if b, ok := d.(Blocking); ok {
		return b.Fdatasync(fd)
	}
	return fdatasyncSubmit(d, fd)
}

func fdatasyncSubmit(d Driver, fd int) error {
	w := getWaiter()
	defer putWaiter(w)
	c := w.set(0, OpFdatasync, fd, 0, nil, false)
	if err := w.run(d, 1); err != nil {
		return err
	}
	if c.Res < 0 {
		return opError(OpFdatasync, 0, c)
	}
	return nil
}

// WriteAtSync writes all of p at off and makes it durable, with one Submit
// of a write linked to an fdatasync. When the write comes up short the
// kernel cancels the sync; WriteAtSync then writes the rest, again linked
// to a sync, until everything is written and synced or an error stops it.
// A Blocking driver runs it its own way.
func WriteAtSync(d Driver, fd int, p []byte, off int64) (int, error) {
	if b, ok := d.(Blocking); ok {
		return b.WriteAtSync(fd, p, off)
	}
	return writeAtSyncSubmit(d, fd, p, off)
}

func writeAtSyncSubmit(d Driver, fd int, p []byte, off int64) (int, error) {
	w := getWaiter()
	defer putWaiter(w)
	total := 0
	for {
		at := off + int64(total)
		part := chunk(p, total)
		wr := w.set(0, OpWrite, fd, at, part, true)
		sync := w.set(1, OpFdatasync, fd, 0, nil, false)
		if err := w.run(d, 2); err != nil {
			return total, err
		}
		if wr.Res < 0 {
			return total, opError(OpWrite, at, wr)
		}
		total += int(wr.Res)
		switch {
		case wr.Res == 0 && len(part) > 0:
			return total, io.ErrShortWrite
		case sync.Res < 0 && sync.Res != resCanceled:
			return total, opError(OpFdatasync, 0, sync)
		case sync.Res == 0 && total == len(p):
			return total, nil
		}
	}
}
