//go:build unix

package vfs

import (
	"sync"
	"syscall"

	"github.com/felixbroker/felix/ring"
)

// syncDriver is a test-only ring.Driver that runs each operation on the
// submitting goroutine, honouring Link as io_uring does. It can cut writes
// short, fail chosen operations, and records the shape of each batch.
type syncDriver struct {
	mu        sync.Mutex
	writeMax  int                       // when > 0, a write moves at most this many bytes
	fail      map[ring.Op]syscall.Errno // ops that fail with this errno
	submits   int
	lastBatch []ring.Op
	lastLinks []bool
}

func (d *syncDriver) Kind() ring.Kind { return "sync-test" }

func (d *syncDriver) Close() error { return nil }

func (d *syncDriver) Submit(cs []*ring.Completion) error {
	d.mu.Lock()
	d.submits++
	d.lastBatch, d.lastLinks = d.lastBatch[:0], d.lastLinks[:0]
	for _, c := range cs {
		d.lastBatch = append(d.lastBatch, c.Op)
		d.lastLinks = append(d.lastLinks, c.Link)
	}
	d.mu.Unlock()
	cancelled := false
	for _, c := range cs {
		if cancelled {
			c.Res = -int32(syscall.ECANCELED)
		} else {
			c.Res = d.do(c)
			cancelled = c.Link && (c.Res < 0 || (c.Op == ring.OpWrite && int(c.Res) < len(c.Buf)))
		}
		c.Done(c)
	}
	return nil
}

func (d *syncDriver) do(c *ring.Completion) int32 {
	d.mu.Lock()
	errno, writeMax := d.fail[c.Op], d.writeMax
	d.mu.Unlock()
	if errno != 0 {
		return -int32(errno)
	}
	var n int
	var err error
	switch c.Op {
	case ring.OpRead:
		n, err = syscall.Pread(c.FD, c.Buf, c.Off)
	case ring.OpWrite:
		buf := c.Buf
		if writeMax > 0 && len(buf) > writeMax {
			buf = buf[:writeMax]
		}
		n, err = syscall.Pwrite(c.FD, buf, c.Off)
	case ring.OpFdatasync:
		err = syscall.Fsync(c.FD)
	default:
		err = syscall.EINVAL
	}
	if err != nil {
		return -int32(err.(syscall.Errno))
	}
	return int32(n)
}

func (d *syncDriver) batch() (submits int, ops []ring.Op, links []bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.submits, append([]ring.Op(nil), d.lastBatch...), append([]bool(nil), d.lastLinks...)
}
