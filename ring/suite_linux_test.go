//go:build linux

package ring

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// The shared suite's tests that need Linux: RLIMIT_FSIZE makes a write come
// up short on demand.

func TestShortWriteBreaksTheLink(t *testing.T) {
	forEachDriver(t, Config{}, func(t *testing.T, d Driver) {
		_, fd := tempFile(t, t.TempDir())
		const limit = 1 << 20
		withFileSizeLimit(t, limit, func() {
			rec := newRecorder(2)
			w := &Completion{Op: OpWrite, FD: fd, Off: limit - 100, Buf: fill(300, 1), Link: true, Done: rec.done}
			s := &Completion{Op: OpFdatasync, FD: fd, Done: rec.done}
			if err := d.Submit([]*Completion{w, s}); err != nil {
				t.Fatal(err)
			}
			rec.waitN(t, 2)
			if w.Res != 100 || s.Res != resCanceled {
				t.Fatalf("write across RLIMIT_FSIZE: Res %d (want 100), linked sync Res %d (want -ECANCELED)", w.Res, s.Res)
			}
		})
	})
}

// A short write through the helpers is finished and the error that stops
// it reported, direct and through Submit alike: RLIMIT_FSIZE cuts the
// first write short, and the next fails with EFBIG.
func TestWaitingWriteStopsAtTheFileSizeLimit(t *testing.T) {
	forEachDriver(t, Config{}, func(t *testing.T, d Driver) {
		_, fd := tempFile(t, t.TempDir())
		const limit = 1 << 20
		withFileSizeLimit(t, limit, func() {
			n, err := WriteAtSync(d, fd, fill(300, 1), limit-100)
			if n != 100 || !errors.Is(err, unix.EFBIG) {
				t.Fatalf("WriteAtSync across RLIMIT_FSIZE = %d, %v; want 100, EFBIG", n, err)
			}
			n, err = WriteAt(d, fd, fill(300, 2), limit-50)
			if n != 50 || !errors.Is(err, unix.EFBIG) {
				t.Fatalf("WriteAt across RLIMIT_FSIZE = %d, %v; want 50, EFBIG", n, err)
			}
		})
	})
}

// Every helper reports the errno, direct and through Submit alike.
func TestWaitingOperationsOnABadDescriptorAreEBADF(t *testing.T) {
	forEachDriver(t, Config{}, func(t *testing.T, d Driver) {
		p := make([]byte, 8)
		calls := map[string]error{}
		_, calls["WriteAt"] = WriteAt(d, -1, p, 0)
		_, calls["ReadAt"] = ReadAt(d, -1, p, 0)
		_, calls["WriteAtSync"] = WriteAtSync(d, -1, p, 0)
		calls["Fdatasync"] = Fdatasync(d, -1)
		for name, err := range calls {
			if !errors.Is(err, unix.EBADF) {
				t.Errorf("%s on fd -1: %v, want EBADF", name, err)
			}
		}
	})
}

// withFileSizeLimit runs fn with RLIMIT_FSIZE lowered, so writes past limit
// come up short (Go ignores the SIGXFSZ that comes with them).
func withFileSizeLimit(t *testing.T, limit uint64, fn func()) {
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: limit, Max: old.Max}); err != nil {
		t.Skipf("cannot lower RLIMIT_FSIZE: %v", err)
	}
	defer func() {
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
			t.Fatalf("restore RLIMIT_FSIZE: %v", err)
		}
	}()
	fn()
}
