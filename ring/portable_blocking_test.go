package ring

import (
	"bytes"
	"errors"
	"runtime"
	"testing"
)

// The portable driver's waiting path: direct while under the limit,
// through the workers past it, and Close while operations wait.

var _ Blocking = (*portableDriver)(nil)

func openPortableT(t *testing.T, cfg Config) *portableDriver {
	t.Helper()
	cfg.Mode = ModePortable
	return openDriver(t, cfg).(*portableDriver)
}

// holdWorker parks the only worker in a blocking Done and queues nops
// behind it, so that a Submit needing more room than is left blocks (and
// calls the slotWait hook) until the blocker is released.
func holdWorker(t *testing.T, d Driver, nops int) (*blocker, *recorder) {
	t.Helper()
	b := newBlocker()
	if err := d.Submit([]*Completion{{Op: OpNop, Done: b.done}}); err != nil {
		t.Fatal(err)
	}
	await(t, b.entered, "the blocking Done")
	rec := newRecorder(nops)
	for range nops {
		if err := d.Submit([]*Completion{{Op: OpNop, Done: rec.done}}); err != nil {
			t.Fatal(err)
		}
	}
	return b, rec
}

// inBackground runs fn on a goroutine and returns its error's channel.
func inBackground(fn func() error) chan error {
	ch := make(chan error, 1)
	go func() { ch <- fn() }()
	return ch
}

// wantPending fails when ch already holds a result.
func wantPending(t *testing.T, ch chan error, what string) {
	t.Helper()
	select {
	case err := <-ch:
		t.Fatalf("%s returned (%v) while the worker was held", what, err)
	default:
	}
}

// Alone, every waiting operation runs on the caller's thread: each one
// completes while the only worker is held.
func TestPortableWaitingOperationsAloneRunOnTheCallersThread(t *testing.T) {
	d := openPortableT(t, Config{Workers: 1})
	_, fd := tempFile(t, t.TempDir())
	b, _ := holdWorker(t, d, 0)
	defer close(b.release)
	p := fill(5000, 3)
	got := make([]byte, 2*len(p))
	done := inBackground(func() error {
		if _, err := WriteAt(d, fd, p, 0); err != nil {
			return err
		}
		if _, err := WriteAtSync(d, fd, p, int64(len(p))); err != nil {
			return err
		}
		if err := Fdatasync(d, fd); err != nil {
			return err
		}
		_, err := ReadAt(d, fd, got, 0)
		return err
	})
	if err := await(t, done, "the waiting operations with the worker held"); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[:len(p)], p) || !bytes.Equal(got[len(p):], p) {
		t.Fatal("read back different bytes")
	}
	if n := d.durable.Load(); n != 0 {
		t.Fatalf("%d durability operations still counted in progress", n)
	}
}

// While directMax other durability operations are in progress, Fdatasync
// and WriteAtSync go through the workers (their Submit waits for room
// behind the held worker); writes and reads still run direct.
func TestPortableDurableWaitsUseTheWorkersPastTheLimit(t *testing.T) {
	hook, waiting := signal()
	cfg := Config{Entries: 2, Workers: 1}
	cfg.hooks = &hooks{slotWait: hook}
	d := openPortableT(t, cfg)
	_, fd := tempFile(t, t.TempDir())
	d.durable.Add(d.directMax) // as many others as may run direct, in progress
	p := fill(3000, 8)
	durable := []struct {
		name string
		nops int // queued behind the held worker: room left is 2-nops
		run  func() error
	}{
		{"Fdatasync", 2, func() error { return Fdatasync(d, fd) }},
		{"WriteAtSync", 1, func() error {
			n, err := WriteAtSync(d, fd, p, 100)
			if err == nil && n != len(p) {
				t.Errorf("WriteAtSync wrote %d of %d", n, len(p))
			}
			return err
		}},
	}
	for _, op := range durable {
		b, rec := holdWorker(t, d, op.nops)
		done := inBackground(op.run)
		await(t, waiting, op.name+" to wait for room in the workers' queue")
		wantPending(t, done, op.name)
		direct := inBackground(func() error { // direct: the worker is held
			if _, err := WriteAt(d, fd, p, 5000); err != nil {
				return err
			}
			_, err := ReadAt(d, fd, make([]byte, len(p)), 5000)
			return err
		})
		if err := await(t, direct, "WriteAt and ReadAt with the worker held"); err != nil {
			t.Fatal(err)
		}
		close(b.release)
		if err := await(t, done, op.name); err != nil {
			t.Fatalf("%s through the workers: %v", op.name, err)
		}
		rec.waitN(t, op.nops)
		drain(waiting)
	}
	got := make([]byte, len(p))
	mustN(t, len(p))(ReadAt(d, fd, got, 100))
	if !bytes.Equal(got, p) {
		t.Fatal("WriteAtSync through the workers: read back different bytes")
	}
	d.durable.Add(-d.directMax)
	if n := d.durable.Load(); n != 0 {
		t.Fatalf("%d durability operations still counted in progress", n)
	}
}

// Close while a durable wait is queued behind the workers: the wait
// completes, every waiting operation started after Close began is
// ErrClosed, and Close returns once the queue is drained.
func TestPortableCloseWhileWaitingOperationsAreInProgress(t *testing.T) {
	room, waiting := signal()
	closeHook, closing := signal()
	cfg := Config{Entries: 2, Workers: 1}
	cfg.hooks = &hooks{slotWait: room, closeWait: closeHook}
	d := openPortableT(t, cfg)
	f, fd := tempFile(t, t.TempDir())
	d.durable.Add(d.directMax)
	defer d.durable.Add(-d.directMax)
	b, rec := holdWorker(t, d, 1)
	p := fill(700, 5)
	synced := inBackground(func() error {
		n, err := WriteAtSync(d, fd, p, 0)
		if err == nil && n != len(p) {
			t.Errorf("WriteAtSync wrote %d of %d", n, len(p))
		}
		return err
	})
	await(t, waiting, "WriteAtSync to wait for room")
	closed := inBackground(d.Close)
	await(t, closing, "Close to start waiting")
	wantPending(t, closed, "Close")
	for name, err := range afterClose(d, fd) {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s while Close waits: %v, want ErrClosed", name, err)
		}
	}
	close(b.release)
	if err := await(t, synced, "the queued WriteAtSync"); err != nil {
		t.Fatalf("WriteAtSync queued before Close: %v", err)
	}
	if err := await(t, closed, "Close"); err != nil {
		t.Fatal(err)
	}
	rec.waitN(t, 1)
	got := make([]byte, len(p))
	if _, err := f.ReadAt(got, 0); err != nil || !bytes.Equal(got, p) {
		t.Fatalf("after Close: read %v, equal %v", err, bytes.Equal(got, p))
	}
}

// afterClose runs each waiting operation once, direct or not.
func afterClose(d Blocking, fd int) map[string]error {
	p := make([]byte, 8)
	calls := map[string]error{}
	_, calls["WriteAt"] = d.WriteAt(fd, p, 0)
	_, calls["ReadAt"] = d.ReadAt(fd, p, 0)
	_, calls["WriteAtSync"] = d.WriteAtSync(fd, p, 0)
	calls["Fdatasync"] = d.Fdatasync(fd)
	return calls
}

func TestPortableWaitingOperationsAfterCloseAreErrClosed(t *testing.T) {
	for _, h := range []*hooks{{}, {ringWait: true}} {
		cfg := Config{}
		cfg.hooks = h
		d := openPortableT(t, cfg)
		_, fd := tempFile(t, t.TempDir())
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		for name, err := range afterClose(d, fd) {
			if !errors.Is(err, ErrClosed) {
				t.Errorf("ringWait %v: %s after Close: %v, want ErrClosed", h.ringWait, name, err)
			}
		}
	}
}

func TestPortableDirectLimitIsOnePerProcessor(t *testing.T) {
	want := int32(runtime.GOMAXPROCS(0))
	if got := openPortableT(t, Config{}).directMax; got != want {
		t.Fatalf("directMax %d with GOMAXPROCS %d, want %d", got, runtime.GOMAXPROCS(0), want)
	}
	cfg := Config{}
	cfg.hooks = &hooks{ringWait: true}
	if got := openPortableT(t, cfg).directMax; got != 0 {
		t.Fatalf("directMax %d under ringWait, want 0", got)
	}
}

// drain empties a signal channel.
func drain(ch chan struct{}) {
	select {
	case <-ch:
	default:
	}
}
