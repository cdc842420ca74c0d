package ring

import (
	"bytes"
	"errors"
	"io"
	"syscall"
	"testing"
)

// scriptDriver runs each operation against an in-memory file, letting a
// test decide how many bytes each write moves. It completes synchronously.
type scriptDriver struct {
	file     []byte
	writeCap []int // bytes the next writes may move; -1 or absent: all
	synced   int   // bytes durable as of the last successful sync
	submits  int
}

func (d *scriptDriver) Kind() Kind   { return "script" }
func (d *scriptDriver) Close() error { return nil }

func (d *scriptDriver) Submit(cs []*Completion) error {
	d.submits++
	canceled := false
	for _, c := range cs {
		if canceled {
			c.Res = resCanceled
		} else {
			c.Res = d.run(c)
			canceled = c.Link && breaksLink(c)
		}
		c.Done(c)
	}
	return nil
}

func (d *scriptDriver) run(c *Completion) int32 {
	switch c.Op {
	case OpWrite:
		n := len(c.Buf)
		if len(d.writeCap) > 0 {
			if d.writeCap[0] >= 0 {
				n = min(n, d.writeCap[0])
			}
			d.writeCap = d.writeCap[1:]
		}
		if end := int(c.Off) + n; end > len(d.file) {
			d.file = append(d.file, make([]byte, end-len(d.file))...)
		}
		copy(d.file[c.Off:], c.Buf[:n])
		return int32(n)
	case OpFdatasync:
		d.synced = len(d.file)
		return 0
	}
	return -int32(syscall.ENOSYS)
}

func TestWriteAtSyncFinishesAShortWriteThenSyncs(t *testing.T) {
	d := &scriptDriver{writeCap: []int{1000, 500}}
	p := fill(4000, 5)
	n, err := WriteAtSync(d, 3, p, 0)
	if n != len(p) || err != nil {
		t.Fatalf("WriteAtSync = %d, %v", n, err)
	}
	if !bytes.Equal(d.file, p) || d.synced != len(p) {
		t.Fatalf("file %d bytes (equal %v), synced %d", len(d.file), bytes.Equal(d.file, p), d.synced)
	}
	if d.submits != 3 {
		t.Fatalf("%d submits, want 3 (two short writes, then the rest)", d.submits)
	}
}

func TestWriteAtGoesOnAfterShortWrites(t *testing.T) {
	d := &scriptDriver{writeCap: []int{1, 2, 3}}
	p := fill(100, 1)
	if n, err := WriteAt(d, 3, p, 10); n != 100 || err != nil || !bytes.Equal(d.file[10:], p) {
		t.Fatalf("WriteAt = %d, %v", n, err)
	}
	if d.submits != 4 {
		t.Fatalf("%d submits, want 4", d.submits)
	}
}

func TestWriteHelpersStopWhenNothingIsWritten(t *testing.T) {
	d := &scriptDriver{writeCap: []int{10, 0}}
	if n, err := WriteAt(d, 3, make([]byte, 50), 0); n != 10 || !errors.Is(err, io.ErrShortWrite) {
		t.Fatalf("WriteAt = %d, %v; want 10, io.ErrShortWrite", n, err)
	}
	d = &scriptDriver{writeCap: []int{0}}
	if n, err := WriteAtSync(d, 3, make([]byte, 50), 0); n != 0 || !errors.Is(err, io.ErrShortWrite) {
		t.Fatalf("WriteAtSync = %d, %v; want 0, io.ErrShortWrite", n, err)
	}
}

func TestHelperErrorsKeepTheErrno(t *testing.T) {
	d := &scriptDriver{}
	_, err := ReadAt(d, 3, make([]byte, 4), 0)
	if !errors.Is(err, syscall.ENOSYS) {
		t.Fatalf("ReadAt: %v, want ENOSYS inside", err)
	}
}
