package ring

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// waitLimit bounds every wait in the tests: a wait that passes it is a hang.
const waitLimit = 20 * time.Second

// forEachDriver runs fn against every driver this machine has, each as a
// subtest: io_uring sleeping in the kernel at once, io_uring polling first
// (ReapSpin), io_uring with every waiting helper sent through the ring
// (the path durability operations take when many are in progress),
// portable, and portable with every waiting helper sent through the worker
// pool (its path past the same limit). cfg.Mode and cfg.ReapSpin are set
// per driver, and the hooks when cfg has none.
func forEachDriver(t *testing.T, cfg Config, fn func(t *testing.T, d Driver)) {
	t.Helper()
	variants := []struct {
		name     string
		mode     Mode
		reapSpin time.Duration
		hooks    *hooks
	}{
		{"io_uring", ModeUring, 0, nil},
		{"io_uring_spin", ModeUring, reapSpinMax, nil},
		{"io_uring_ringwait", ModeUring, 0, &hooks{ringWait: true}},
		{"portable", ModePortable, 0, nil},
		{"portable_workers", ModePortable, 0, &hooks{ringWait: true}},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			c := cfg
			c.Mode, c.ReapSpin = v.mode, v.reapSpin
			if c.hooks == nil {
				c.hooks = v.hooks
			}
			fn(t, openDriver(t, c))
		})
	}
}

// openDriver opens cfg's driver, skips when io_uring is refused here, and
// closes it at the end of the test.
func openDriver(t testing.TB, cfg Config) Driver {
	t.Helper()
	d, err := Open(cfg)
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("io_uring not available here: %v", err)
	}
	if err != nil {
		t.Fatalf("Open(%+v): %v", cfg, err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil && !errors.Is(err, ErrClosed) {
			t.Errorf("Close: %v", err)
		}
	})
	return d
}

// tempFile creates an empty file open for reading and writing and returns
// it with its descriptor (a HANDLE on Windows).
func tempFile(t testing.TB, dir string) (*os.File, int) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "data"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, int(f.Fd())
}

// await receives from ch or fails the test after waitLimit.
func await[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

// recorder is a Done callback that keeps completions in arrival order.
type recorder struct {
	mu       sync.Mutex
	got      []*Completion
	each     chan *Completion
	received int // taken from each by waitN
}

func newRecorder(capacity int) *recorder {
	return &recorder{each: make(chan *Completion, capacity)}
}

func (r *recorder) done(c *Completion) {
	r.mu.Lock()
	r.got = append(r.got, c)
	r.mu.Unlock()
	r.each <- c
}

// waitN waits until n completions in all have arrived and returns every
// completion so far in arrival order.
func (r *recorder) waitN(t testing.TB, n int) []*Completion {
	t.Helper()
	for ; r.received < n; r.received++ {
		await(t, r.each, "completion "+itoa(r.received))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Completion(nil), r.got...)
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	n := len(b)
	for ; i > 0; i /= 10 {
		n--
		b[n] = byte('0' + i%10)
	}
	return string(b[n:])
}

// blocker is a Done that signals entered and then holds its goroutine (the
// reaper, or a worker) until release is closed.
type blocker struct {
	entered  chan struct{}
	release  chan struct{}
	finished chan struct{}
}

func newBlocker() *blocker {
	return &blocker{entered: make(chan struct{}), release: make(chan struct{}), finished: make(chan struct{})}
}

func (b *blocker) done(*Completion) {
	close(b.entered)
	<-b.release
	close(b.finished)
}

// signal returns a hook that reports each call on a buffered channel
// without ever blocking the driver.
func signal() (func(), chan struct{}) {
	ch := make(chan struct{}, 1)
	return func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}, ch
}

func fill(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return b
}
