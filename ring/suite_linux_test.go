//go:build linux

package ring

import (
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
