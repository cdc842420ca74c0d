//go:build unix

package vfs

import (
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/felixbroker/felix/ring"
)

// blockingDriver is a test ring.Blocking: its waiting methods record their
// calls and return what the test set; Submit must never be reached.
type blockingDriver struct {
	syncDriver
	calls   []string
	n       int   // bytes the next write or read reports; -1: len(p)
	err     error // the error the next call returns
	submits int
}

func (d *blockingDriver) Submit(cs []*ring.Completion) error {
	d.submits++
	return d.syncDriver.Submit(cs)
}

func (d *blockingDriver) result(name string, p []byte) (int, error) {
	d.calls = append(d.calls, name)
	n := d.n
	if n < 0 {
		n = len(p)
	}
	return n, d.err
}

func (d *blockingDriver) WriteAt(_ int, p []byte, _ int64) (int, error) {
	return d.result("WriteAt", p)
}

func (d *blockingDriver) ReadAt(_ int, p []byte, _ int64) (int, error) {
	return d.result("ReadAt", p)
}

func (d *blockingDriver) Fdatasync(int) error {
	_, err := d.result("Fdatasync", nil)
	return err
}

func (d *blockingDriver) WriteAtSync(_ int, p []byte, _ int64) (int, error) {
	return d.result("WriteAtSync", p)
}

func TestOSHandsDataCallsToABlockingDriver(t *testing.T) {
	d := &blockingDriver{n: -1}
	f := create(t, NewOS(d), filepath.Join(t.TempDir(), "f"))
	defer closeFile(t, f)
	p := make([]byte, 10)
	if n, err := f.WriteAt(p, 0); n != 10 || err != nil {
		t.Fatalf("WriteAt = %d, %v", n, err)
	}
	if n, err := f.ReadAt(p, 0); n != 10 || err != nil {
		t.Fatalf("ReadAt = %d, %v", n, err)
	}
	must(t, f.Sync())
	if n, err := f.WriteAtSync(p, 0); n != 10 || err != nil {
		t.Fatalf("WriteAtSync = %d, %v", n, err)
	}
	want := []string{"WriteAt", "ReadAt", "Fdatasync", "WriteAtSync"}
	if !slices.Equal(d.calls, want) || d.submits != 0 {
		t.Fatalf("calls %v and %d submits; want %v and none", d.calls, d.submits, want)
	}
}

// Errors from a Blocking driver come back as *fs.PathError naming the
// call's operation, with the errno inside; io.EOF comes back bare.
func TestOSBlockingDriverErrorsArePathErrors(t *testing.T) {
	d := &blockingDriver{}
	f := create(t, NewOS(d), filepath.Join(t.TempDir(), "f"))
	defer closeFile(t, f)
	p := make([]byte, 10)
	cases := []struct {
		name   string
		n      int
		err    error
		call   func() error
		wantOp string
	}{
		{"WriteAt", 3, syscall.ENOSPC, func() error { _, err := f.WriteAt(p, 0); return err }, "write"},
		{"short WriteAtSync", 3, syscall.ENOSPC, func() error { _, err := f.WriteAtSync(p, 0); return err }, "write"},
		{"WriteAtSync's sync", 10, syscall.EIO, func() error { _, err := f.WriteAtSync(p, 0); return err }, "sync"},
		{"Sync", 0, syscall.EIO, f.Sync, "sync"},
		{"ReadAt", 0, syscall.EIO, func() error { _, err := f.ReadAt(p, 0); return err }, "read"},
	}
	for _, c := range cases {
		d.n, d.err = c.n, c.err
		err := c.call()
		var pe *fs.PathError
		if !errors.As(err, &pe) || pe.Op != c.wantOp || !errors.Is(err, c.err) {
			t.Errorf("%s: %v; want a PathError %q matching %v", c.name, err, c.wantOp, c.err)
		}
	}
	d.n, d.err = 4, io.EOF
	if n, err := f.ReadAt(p, 0); n != 4 || err != io.EOF {
		t.Errorf("ReadAt at the end = %d, %v; want 4, io.EOF itself", n, err)
	}
}
