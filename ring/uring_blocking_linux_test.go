//go:build linux

package ring

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// countingEnter counts submitting io_uring_enter calls.
type countingEnter struct{ submits atomic.Int64 }

func (c *countingEnter) enter(fd int, toSubmit, minComplete, flags uint32) (int, error) {
	if toSubmit > 0 {
		c.submits.Add(1)
	}
	return rawEnter(fd, toSubmit, minComplete, flags)
}

var _ Blocking = (*uringDriver)(nil)

// Alone, every waiting operation runs on the caller's thread: nothing is
// submitted to the ring, and the bytes are where they should be.
func TestUringWaitingOperationsAloneRunOnTheCallersThread(t *testing.T) {
	ce := &countingEnter{}
	cfg := Config{}
	cfg.hooks = &hooks{enter: ce.enter}
	d := openUringT(t, cfg)
	_, fd := tempFile(t, t.TempDir())
	p := fill(5000, 3)
	mustN(t, len(p))(WriteAt(d, fd, p, 0))
	mustN(t, len(p))(WriteAtSync(d, fd, p, int64(len(p))))
	mustN(t, 0)(0, Fdatasync(d, fd))
	got := make([]byte, 2*len(p))
	mustN(t, len(got))(ReadAt(d, fd, got, 0))
	if !bytes.Equal(got[:len(p)], p) || !bytes.Equal(got[len(p):], p) {
		t.Fatal("read back different bytes")
	}
	if n := ce.submits.Load(); n != 0 {
		t.Fatalf("%d submitting enters, want 0", n)
	}
	if n := d.durable.Load(); n != 0 {
		t.Fatalf("%d durability operations still counted in progress", n)
	}
}

// While directMax other durability operations are in progress, Fdatasync
// and WriteAtSync go through the ring (one submission each); writes and
// reads still do not.
func TestUringDurableWaitsUseTheRingWhileOthersAreInProgress(t *testing.T) {
	ce := &countingEnter{}
	cfg := Config{}
	cfg.hooks = &hooks{enter: ce.enter}
	d := openUringT(t, cfg)
	_, fd := tempFile(t, t.TempDir())
	d.durable.Add(d.directMax) // as many others as may run direct, in progress
	p := fill(3000, 8)
	mustN(t, len(p))(WriteAtSync(d, fd, p, 100))
	mustN(t, 0)(0, Fdatasync(d, fd))
	if n := ce.submits.Load(); n != 2 {
		t.Fatalf("%d submitting enters, want 2 (WriteAtSync, Fdatasync)", n)
	}
	got := make([]byte, len(p))
	mustN(t, len(p))(ReadAt(d, fd, got, 100))
	mustN(t, len(p))(WriteAt(d, fd, p, 0))
	if n := ce.submits.Load(); n != 2 || !bytes.Equal(got, p) {
		t.Fatalf("%d submitting enters after a read and a write (want 2); read back equal: %v", n, bytes.Equal(got, p))
	}
	d.durable.Add(-d.directMax)
	if n := d.durable.Load(); n != 0 {
		t.Fatalf("%d durability operations still counted in progress", n)
	}
}

func TestUringWaitingOperationsAfterCloseAreErrClosed(t *testing.T) {
	d := openUringT(t, Config{})
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 8)
	calls := map[string]error{}
	_, calls["WriteAt"] = d.WriteAt(0, p, 0)
	_, calls["ReadAt"] = d.ReadAt(0, p, 0)
	_, calls["WriteAtSync"] = d.WriteAtSync(0, p, 0)
	calls["Fdatasync"] = d.Fdatasync(0)
	for name, err := range calls {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
}

// Callers waiting through the ring and callers submitting batches of their
// own share it without losing a completion, while direct durable waits run
// beside them.
func TestUringWaitingCallersAndSubmittersShareTheRing(t *testing.T) {
	for _, h := range []*hooks{{ringWait: true}, {}} {
		cfg := Config{Entries: 16}
		cfg.hooks = h
		d := openUringT(t, cfg)
		_, fd := tempFile(t, t.TempDir())
		const goroutines, rounds = 8, 40
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				shareTheRing(t, d, fd, g, rounds)
			}()
		}
		wg.Wait()
		got := make([]byte, goroutines*rounds*64)
		mustN(t, len(got))(ReadAt(d, fd, got, 0))
		for g := range goroutines {
			for i := range rounds {
				off := (g*rounds + i) * 64
				if !bytes.Equal(got[off:off+64], fill(64, byte(g*rounds+i))) {
					t.Fatalf("goroutine %d round %d: wrong bytes", g, i)
				}
			}
		}
	}
}

// shareTheRing is goroutine g: odd rounds wait through the helpers, even
// rounds submit a linked write and fdatasync and wait on their Done.
func shareTheRing(t *testing.T, d Driver, fd, g, rounds int) {
	rec := newRecorder(2)
	for i := range rounds {
		k := g*rounds + i
		p, off := fill(64, byte(k)), int64(k*64)
		if i%2 == 1 {
			if n, err := WriteAtSync(d, fd, p, off); n != len(p) || err != nil {
				t.Errorf("WriteAtSync = %d, %v", n, err)
			}
			continue
		}
		w := &Completion{Op: OpWrite, FD: fd, Off: off, Buf: p, Link: true, Done: rec.done}
		s := &Completion{Op: OpFdatasync, FD: fd, Done: rec.done}
		if err := d.Submit([]*Completion{w, s}); err != nil {
			t.Error(err)
			return
		}
		rec.waitN(t, 2*(i/2+1))
		if w.Res != 64 || s.Res != 0 {
			t.Errorf("write Res %d, sync Res %d", w.Res, s.Res)
		}
	}
}

// Close right after waits through the ring, again and again.
func TestUringCloseAfterWaitsThroughTheRing(t *testing.T) {
	dir := t.TempDir()
	for i := range 20 {
		cfg := Config{Mode: ModeUring}
		cfg.hooks = &hooks{ringWait: true}
		d, err := Open(cfg)
		if errors.Is(err, ErrUnavailable) {
			t.Skip(err)
		}
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.CreateTemp(dir, "f")
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				mustN(t, 10)(WriteAtSync(d, int(f.Fd()), fill(10, byte(g)), int64(10*g)))
			}()
		}
		wg.Wait()
		if err := d.Close(); err != nil {
			t.Fatalf("round %d: Close: %v", i, err)
		}
		f.Close()
	}
}

func TestUringDirectLimitIsOnePerProcessor(t *testing.T) {
	want := int32(runtime.GOMAXPROCS(0))
	if got := openUringT(t, Config{}).directMax; got != want {
		t.Fatalf("directMax %d with GOMAXPROCS %d, want %d", got, runtime.GOMAXPROCS(0), want)
	}
	cfg := Config{}
	cfg.hooks = &hooks{ringWait: true}
	if got := openUringT(t, cfg).directMax; got != 0 {
		t.Fatalf("directMax %d under ringWait, want 0", got)
	}
}
