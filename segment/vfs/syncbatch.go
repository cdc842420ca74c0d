package vfs

import (
	"runtime"

	"github.com/felixbroker/felix/ring"
)

// SyncBatch makes several files durable at once: Add each file, Run, then
// read each one's Err. Files of the OS FS that share one driver are synced
// with one Submit of an fdatasync each (on io_uring, one io_uring_enter:
// the kernel runs them side by side); any other file (MemFS, a wrapping
// FS, files of different drivers) is synced with its own Sync, in turn.
// Each file's result is its own: one failing sync fails only its entry.
//
// A SyncBatch is reused from Run to Run and allocates nothing once it has
// held its largest batch. It is not safe for concurrent use.
type SyncBatch struct {
	files []File
	errs  []error
	cs    []ring.Completion
	ptrs  []*ring.Completion
	done  chan struct{}
}

// Reset empties the batch, keeping its memory.
func (b *SyncBatch) Reset() {
	clear(b.files)
	clear(b.errs)
	b.files, b.errs = b.files[:0], b.errs[:0]
}

// Add queues f and returns its index for Err.
func (b *SyncBatch) Add(f File) int {
	b.files = append(b.files, f)
	b.errs = append(b.errs, nil)
	return len(b.files) - 1
}

// Len is how many files the batch holds.
func (b *SyncBatch) Len() int { return len(b.files) }

// Err is the result of file i's sync in the last Run: nil once its
// written data is durable.
func (b *SyncBatch) Err(i int) error { return b.errs[i] }

// Run syncs every file added since the last Reset and waits for them all.
// It must not be called from a ring Done callback.
func (b *SyncBatch) Run() {
	d := b.sharedDriver()
	if d == nil {
		for i, f := range b.files {
			b.errs[i] = f.Sync()
		}
		return
	}
	b.runDriver(d)
}

// sharedDriver is the driver every file of the batch goes through, when
// they are all open OS files of one driver and more than one; else nil.
func (b *SyncBatch) sharedDriver() ring.Driver {
	if len(b.files) < 2 {
		return nil
	}
	var d ring.Driver
	for _, f := range b.files {
		of, ok := f.(*osFile)
		if !ok || of.closed || (d != nil && of.d != d) {
			return nil
		}
		d = of.d
	}
	return d
}

// runDriver submits one fdatasync per file through d, as one batch, and
// waits for every completion.
func (b *SyncBatch) runDriver(d ring.Driver) {
	n := len(b.files)
	if cap(b.cs) < n {
		b.cs = make([]ring.Completion, n)
		b.ptrs = make([]*ring.Completion, n)
		b.done = make(chan struct{}, n)
		signal := b.signal
		for i := range b.cs {
			b.cs[i].Done = signal
		}
	}
	b.cs, b.ptrs = b.cs[:n], b.ptrs[:n]
	for i, f := range b.files {
		c := &b.cs[i]
		c.Op, c.FD, c.Off, c.Buf, c.Bufs, c.Link, c.Res = ring.OpFdatasync, f.(*osFile).fd, 0, nil, nil, false, 0
		b.ptrs[i] = c
	}
	if err := d.Submit(b.ptrs); err != nil {
		// Submit refuses before it queues anything (closed, invalid).
		for i, f := range b.files {
			b.errs[i] = f.(*osFile).pathErr("sync", err)
		}
		return
	}
	for range n {
		<-b.done
	}
	for i, f := range b.files {
		b.errs[i] = f.(*osFile).wrap("sync", b.cs[i].Err())
	}
	runtime.KeepAlive(b.files) // their os.Files must not close the fds under the kernel
}

func (b *SyncBatch) signal(*ring.Completion) { b.done <- struct{}{} }
