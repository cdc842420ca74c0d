//go:build linux

package ring

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// faultyEnter wraps io_uring_enter and fails the next calls of one kind
// (submitting, or waiting for completions) with an errno.
type faultyEnter struct {
	mu        sync.Mutex
	errno     syscall.Errno
	submits   int // submitting calls still to fail
	waits     int // GETEVENTS calls still to fail
	injected  int
	sleeps    int // GETEVENTS calls that may sleep (min_complete > 0)
	onInject  func(injected int)
	onRecover func() // first submitting call that passes after an injection
}

func (f *faultyEnter) enter(fd int, toSubmit, minComplete, flags uint32) (int, error) {
	f.mu.Lock()
	fail := false
	switch {
	case toSubmit > 0 && f.submits > 0:
		f.submits--
		fail = true
	case toSubmit == 0 && flags&enterGetEvents != 0 && f.waits > 0:
		f.waits--
		fail = true
	}
	if fail {
		f.injected++
	}
	if toSubmit == 0 && flags&enterGetEvents != 0 && minComplete > 0 {
		f.sleeps++
	}
	onInject, onRecover, injected := f.onInject, f.onRecover, f.injected
	if !fail && toSubmit > 0 && f.injected > 0 {
		f.onRecover = nil
	} else {
		onRecover = nil
	}
	f.mu.Unlock()
	if fail {
		if onInject != nil {
			onInject(injected)
		}
		return 0, f.errno
	}
	if onRecover != nil {
		onRecover()
	}
	return rawEnter(fd, toSubmit, minComplete, flags)
}

func (f *faultyEnter) arm(errno syscall.Errno, submits, waits int) {
	f.mu.Lock()
	f.errno, f.submits, f.waits = errno, submits, waits
	f.mu.Unlock()
}

func openUringT(t *testing.T, cfg Config) *uringDriver {
	t.Helper()
	cfg.Mode = ModeUring
	return openDriver(t, cfg).(*uringDriver)
}

// Every transient errno of io_uring_enter is retried, on both sides: three
// failed submitting calls, then three failed waits in the reaper, which is
// sure to wait because the read it waits for is on an empty pipe.
func TestUringRetriesTransientEnterErrors(t *testing.T) {
	for _, errno := range []syscall.Errno{unix.EINTR, unix.EAGAIN, unix.EBUSY} {
		t.Run(unix.ErrnoName(errno), func(t *testing.T) {
			f := &faultyEnter{}
			cfg := Config{Entries: 8}
			cfg.hooks = &hooks{enter: f.enter}
			d := openUringT(t, cfg)
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			defer w.Close()
			allInjected := make(chan struct{})
			f.mu.Lock()
			f.onInject = func(injected int) {
				if injected == 6 {
					close(allInjected)
				}
			}
			f.mu.Unlock()
			f.arm(errno, 3, 3)
			rec := newRecorder(1)
			buf := make([]byte, 16)
			read := &Completion{Op: OpRead, FD: int(r.Fd()), Buf: buf, Done: rec.done}
			if err := d.Submit([]*Completion{read}); err != nil {
				t.Fatal(err)
			}
			await(t, allInjected, "three failed submits and three failed waits")
			if _, err := w.Write([]byte("through")); err != nil {
				t.Fatal(err)
			}
			rec.waitN(t, 1)
			if read.Res != 7 || string(buf[:7]) != "through" {
				t.Fatalf("pipe read: Res %d, %q", read.Res, buf[:max(read.Res, 0)])
			}
			_, fd := tempFile(t, t.TempDir())
			if n, err := WriteAtSync(d, fd, fill(5000, 4), 0); n != 5000 || err != nil {
				t.Fatalf("WriteAtSync after the faults = %d, %v", n, err)
			}
		})
	}
}

// With operations of its own in the kernel, a submitter told EAGAIN waits
// for the reaper's next pass before it tries again. The operation in the
// kernel is a read of an empty pipe, so that pass comes only when the test
// writes to the pipe, after the fault.
func TestUringEAGAINWaitsForAReap(t *testing.T) {
	f := &faultyEnter{}
	cfg := Config{Entries: 8}
	cfg.hooks = &hooks{enter: f.enter}
	d := openUringT(t, cfg)
	gen := func() uint64 { d.mu.Lock(); defer d.mu.Unlock(); return d.reapGen }
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()

	rec := newRecorder(2)
	read := &Completion{Op: OpRead, FD: int(r.Fd()), Buf: make([]byte, 8), Done: rec.done}
	if err := d.Submit([]*Completion{read}); err != nil {
		t.Fatal(err)
	}
	var genAtFault, genAtRetry atomic.Uint64
	injected := make(chan struct{})
	f.mu.Lock()
	f.onInject = func(int) { genAtFault.Store(gen()); close(injected) }
	f.onRecover = func() { genAtRetry.Store(gen()) }
	f.mu.Unlock()
	f.arm(unix.EAGAIN, 1, 0)
	submitted := make(chan error, 1)
	go func() { submitted <- d.Submit([]*Completion{{Op: OpNop, Done: rec.done}}) }()
	await(t, injected, "the injected EAGAIN")
	if _, err := w.Write([]byte("go")); err != nil {
		t.Fatal(err)
	}
	if err := await(t, submitted, "Submit after EAGAIN"); err != nil {
		t.Fatal(err)
	}
	rec.waitN(t, 2)
	if genAtRetry.Load() <= genAtFault.Load() {
		t.Fatalf("retried at reap pass %d, the fault came at pass %d: it did not wait for a reap",
			genAtRetry.Load(), genAtFault.Load())
	}
}

// A Done that submits and is told EAGAIN, while the kernel holds another
// operation (a read of an empty pipe), must not wait for a reap pass of the
// reaper it runs on: it backs off and retries instead of deadlocking.
func TestUringEAGAINInsideDoneDoesNotDeadlock(t *testing.T) {
	f := &faultyEnter{}
	cfg := Config{Entries: 8}
	cfg.hooks = &hooks{enter: f.enter}
	d := openUringT(t, cfg)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	rec := newRecorder(3)
	read := &Completion{Op: OpRead, FD: int(r.Fd()), Buf: make([]byte, 8), Done: rec.done}
	inner := &Completion{Op: OpNop, Done: rec.done}
	outer := &Completion{Op: OpNop, Done: func(c *Completion) {
		f.arm(unix.EAGAIN, 2, 0)
		if err := d.Submit([]*Completion{inner}); err != nil {
			t.Error(err)
		}
		rec.done(c)
	}}
	if err := d.Submit([]*Completion{read}); err != nil {
		t.Fatal(err)
	}
	if err := d.Submit([]*Completion{outer}); err != nil {
		t.Fatal(err)
	}
	got := rec.waitN(t, 2)
	if got[0] != outer || got[1] != inner {
		t.Fatalf("completions %v, want outer then inner", tags(got))
	}
	if _, err := w.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	rec.waitN(t, 3)
}

// With a ReapSpin budget the reaper sees a completion that comes while it
// polls without ever sleeping in io_uring_enter.
func TestUringReapSpinPollsBeforeSleeping(t *testing.T) {
	f := &faultyEnter{}
	cfg := Config{Entries: 8}
	cfg.hooks = &hooks{enter: f.enter, reapSpin: waitLimit}
	d := openUringT(t, cfg)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	rec := newRecorder(1)
	read := &Completion{Op: OpRead, FD: int(r.Fd()), Buf: make([]byte, 8), Done: rec.done}
	if err := d.Submit([]*Completion{read}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("spin")); err != nil {
		t.Fatal(err)
	}
	rec.waitN(t, 1)
	if read.Res != 4 {
		t.Fatalf("pipe read Res %d", read.Res)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sleeps != 0 {
		t.Fatalf("the reaper slept in io_uring_enter %d times within its spin budget", f.sleeps)
	}
}

// A CQ ring of 4 with 32 operations in flight and the reaper held: the
// kernel parks completions in its overflow list, and every one of them
// still reaches its Done exactly once.
func TestUringCQOverflowLosesNoCompletion(t *testing.T) {
	const slots = 32
	cfg := Config{Entries: slots}
	cfg.hooks = &hooks{sqEntries: 4, cqEntries: 4}
	d := openUringT(t, cfg)
	if d.ring.cqEntries != 4 || d.ring.sqEntries != 4 {
		t.Fatalf("rings: sq %d cq %d, want 4 and 4", d.ring.sqEntries, d.ring.cqEntries)
	}
	b := newBlocker()
	if err := d.Submit([]*Completion{{Op: OpNop, Done: b.done}}); err != nil {
		t.Fatal(err)
	}
	await(t, b.entered, "the blocking Done")
	seen := make([]atomic.Int32, slots-1)
	all := make(chan struct{})
	var left atomic.Int32
	left.Store(slots - 1)
	done := func(c *Completion) {
		if seen[c.Tag].Add(1) != 1 {
			t.Errorf("completion %d twice", c.Tag)
		}
		if left.Add(-1) == 0 {
			close(all)
		}
	}
	cs := make([]*Completion, slots-1)
	for i := range cs {
		cs[i] = &Completion{Op: OpNop, Tag: uint64(i), Done: done}
	}
	if err := d.Submit(cs); err != nil { // 31 NOPs through an SQ of 4
		t.Fatal(err)
	}
	if !d.ring.sqOverflowed() {
		t.Fatal("IORING_SQ_CQ_OVERFLOW not set with 31 completions and a CQ of 4")
	}
	close(b.release)
	await(t, all, "every completion")
	if d.overflowFlushes.Load() == 0 {
		t.Error("the reaper never flushed the overflow list itself")
	}
	if n := atomic.LoadUint32(d.ring.cqOverflow); n != 0 {
		t.Errorf("the kernel dropped %d completions", n)
	}
}

func TestAutoFallsBackWhenSetupIsRefused(t *testing.T) {
	cases := []struct {
		name, sysctl string
		errno        syscall.Errno
		reason       string
	}{
		{"ENOSYS", "0", unix.ENOSYS, "the kernel has no io_uring"},
		{"EPERM seccomp", "0", unix.EPERM, "seccomp"},
		{"EPERM sysctl 2", "2", unix.EPERM, "kernel.io_uring_disabled=2"},
		{"EPERM sysctl 1", "1", unix.EPERM, "kernel.io_uring_disabled=1"},
		{"EINVAL", "0", unix.EINVAL, "lacks an io_uring feature"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sysctl := filepath.Join(t.TempDir(), "io_uring_disabled")
			if err := os.WriteFile(sysctl, []byte(tc.sysctl+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			swap(t, &uringDisabledPath, sysctl)
			swap(t, &uringSetup, func(uint32, *uringParams) (int, error) { return -1, tc.errno })
			checkFallback(t, unix.ErrnoName(tc.errno), tc.reason)
		})
	}
}

func TestAutoFallsBackWithoutNoDrop(t *testing.T) {
	swap(t, &uringSetup, func(n uint32, p *uringParams) (int, error) {
		fd, err := rawSetup(n, p)
		p.features &^= featNoDrop
		return fd, err
	})
	checkFallback(t, "IORING_FEAT_NODROP", "IORING_FEAT_NODROP")
}

// checkFallback opens in ModeAuto and ModeUring with setup refused and
// checks the portable driver, the warning and the error, each naming why.
func checkFallback(t *testing.T, errWant, reason string) {
	t.Helper()
	var log bytes.Buffer
	d := openDriver(t, Config{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if d.Kind() != KindPortable {
		t.Fatalf("ModeAuto gave %v", d.Kind())
	}
	line := log.String()
	t.Logf("fallback log: %s", line)
	for _, want := range []string{"level=WARN", "io_uring unavailable, using the portable driver", errWant, reason} {
		if !strings.Contains(line, want) {
			t.Errorf("log line %q lacks %q", line, want)
		}
	}
	if strings.Count(line, "\n") != 1 {
		t.Errorf("want exactly one log line, got %q", line)
	}
	_, err := Open(Config{Mode: ModeUring})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), errWant) || !strings.Contains(err.Error(), reason) {
		t.Fatalf("ModeUring: %v; want ErrUnavailable naming %q and %q", err, errWant, reason)
	}
}

func swap[T any](t *testing.T, p *T, v T) {
	old := *p
	*p = v
	t.Cleanup(func() { *p = old })
}

func TestAutoPicksUringWhenTheKernelAllowsIt(t *testing.T) {
	var log bytes.Buffer
	d := openDriver(t, Config{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if d.Kind() != KindUring {
		t.Skipf("io_uring refused here: %s", log.String())
	}
	if log.Len() != 0 {
		t.Errorf("logged %q on the io_uring path", log.String())
	}
}
