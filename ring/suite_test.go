package ring

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

// The shared suite: every test here runs against io_uring and portable.

func TestWriteThenReadRoundTrip(t *testing.T) {
	forEachDriver(t, Config{}, func(t *testing.T, d Driver) {
		_, fd := tempFile(t, t.TempDir())
		want := fill(10000, 3)
		if n, err := WriteAt(d, fd, want, 100); n != len(want) || err != nil {
			t.Fatalf("WriteAt = %d, %v", n, err)
		}
		got := make([]byte, len(want))
		if n, err := ReadAt(d, fd, got, 100); n != len(got) || err != nil {
			t.Fatalf("ReadAt = %d, %v", n, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatal("read back different bytes")
		}
		tail := make([]byte, 50)
		n, err := ReadAt(d, fd, tail, 100+int64(len(want))-20)
		if n != 20 || err != io.EOF || !bytes.Equal(tail[:20], want[len(want)-20:]) {
			t.Fatalf("ReadAt across the end = %d, %v; want 20, io.EOF", n, err)
		}
	})
}

func TestSubmittedWriteAndReadReportBytes(t *testing.T) {
	forEachDriver(t, Config{}, func(t *testing.T, d Driver) {
		_, fd := tempFile(t, t.TempDir())
		rec := newRecorder(2)
		src, dst := fill(4096, 9), make([]byte, 4096)
		w := &Completion{Op: OpWrite, FD: fd, Off: 4096, Buf: src, Link: true, Done: rec.done, Tag: 1}
		r := &Completion{Op: OpRead, FD: fd, Off: 4096, Buf: dst, Done: rec.done, Tag: 2}
		if err := d.Submit([]*Completion{w, r}); err != nil {
			t.Fatal(err)
		}
		got := rec.waitN(t, 2)
		if got[0] != w || got[1] != r || w.Res != 4096 || r.Res != 4096 {
			t.Fatalf("completions %v: write res %d, read res %d", tags(got), w.Res, r.Res)
		}
		if !bytes.Equal(dst, src) {
			t.Fatal("linked read did not see the write")
		}
	})
}

func TestWritevWritesEveryBuffer(t *testing.T) {
	forEachDriver(t, Config{}, func(t *testing.T, d Driver) {
		_, fd := tempFile(t, t.TempDir())
		for _, n := range []int{3, MaxIovecs} {
			bufs := make([][]byte, n)
			var want []byte
			for i := range bufs {
				bufs[i] = fill(i*13%100, byte(i)) // includes empty buffers
				want = append(want, bufs[i]...)
			}
			rec := newRecorder(1)
			c := &Completion{Op: OpWritev, FD: fd, Off: 7, Bufs: bufs, Done: rec.done}
			if err := d.Submit([]*Completion{c}); err != nil {
				t.Fatal(err)
			}
			rec.waitN(t, 1)
			if int(c.Res) != len(want) {
				t.Fatalf("writev of %d buffers: Res %d, want %d", n, c.Res, len(want))
			}
			got := make([]byte, len(want))
			if _, err := ReadAt(d, fd, got, 7); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("writev of %d buffers: read back %v, equal %v", n, err, bytes.Equal(got, want))
			}
		}
	})
}

func TestLinkedWriteAndFdatasyncCompleteInOrder(t *testing.T) {
	forEachDriver(t, Config{}, func(t *testing.T, d Driver) {
		_, fd := tempFile(t, t.TempDir())
		rec := newRecorder(2)
		w := &Completion{Op: OpWrite, FD: fd, Buf: fill(1024, 1), Link: true, Done: rec.done}
		s := &Completion{Op: OpFdatasync, FD: fd, Done: rec.done}
		if err := d.Submit([]*Completion{w, s}); err != nil {
			t.Fatal(err)
		}
		got := rec.waitN(t, 2)
		if got[0] != w || got[1] != s || w.Res != 1024 || s.Res != 0 {
			t.Fatalf("write res %d, sync res %d, order ok %v", w.Res, s.Res, got[0] == w)
		}
		if n, err := WriteAtSync(d, fd, fill(3000, 2), 1024); n != 3000 || err != nil {
			t.Fatalf("WriteAtSync = %d, %v", n, err)
		}
		if err := Fdatasync(d, fd); err != nil {
			t.Fatalf("Fdatasync: %v", err)
		}
	})
}

func TestFailedLinkedOpCancelsRestOfItsChain(t *testing.T) {
	forEachDriver(t, Config{}, func(t *testing.T, d Driver) {
		dir := t.TempDir()
		rw, fd := tempFile(t, dir)
		ro, err := os.Open(rw.Name())
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		rec := newRecorder(4)
		bad := &Completion{Op: OpWrite, FD: int(ro.Fd()), Buf: []byte("x"), Link: true, Done: rec.done, Tag: 1}
		sync := &Completion{Op: OpFdatasync, FD: fd, Link: true, Done: rec.done, Tag: 2}
		after := &Completion{Op: OpWrite, FD: fd, Buf: []byte("never"), Done: rec.done, Tag: 3}
		free := &Completion{Op: OpWrite, FD: fd, Off: 100, Buf: []byte("runs"), Done: rec.done, Tag: 4}
		if err := d.Submit([]*Completion{bad, sync, after, free}); err != nil {
			t.Fatal(err)
		}
		rec.waitN(t, 4)
		if bad.Res >= 0 || bad.Res == resCanceled {
			t.Errorf("write to a read-only fd: Res %d, want an error", bad.Res)
		}
		for _, c := range []*Completion{sync, after} {
			if !errors.Is(c.Err(), syscall.ECANCELED) {
				t.Errorf("tag %d: Res %d (%v), want -ECANCELED", c.Tag, c.Res, c.Err())
			}
		}
		if free.Res != 4 {
			t.Errorf("independent write after the chain: Res %d, want 4", free.Res)
		}
		head := make([]byte, 5)
		if n, _ := ReadAt(d, fd, head, 0); n == 5 && string(head) == "never" {
			t.Error("a canceled write ran")
		}
	})
}

func TestShortReadBreaksTheLink(t *testing.T) {
	forEachDriver(t, Config{}, func(t *testing.T, d Driver) {
		_, fd := tempFile(t, t.TempDir())
		if _, err := WriteAt(d, fd, fill(100, 0), 0); err != nil {
			t.Fatal(err)
		}
		rec := newRecorder(2)
		short := &Completion{Op: OpRead, FD: fd, Buf: make([]byte, 200), Link: true, Done: rec.done}
		next := &Completion{Op: OpRead, FD: fd, Buf: make([]byte, 10), Done: rec.done}
		if err := d.Submit([]*Completion{short, next}); err != nil {
			t.Fatal(err)
		}
		rec.waitN(t, 2)
		if short.Res != 100 || next.Res != resCanceled {
			t.Fatalf("short read Res %d (want 100), next Res %d (want -ECANCELED)", short.Res, next.Res)
		}
	})
}

func TestSubmitBlocksWhileEverySlotIsInFlight(t *testing.T) {
	const entries = 4
	hook, waiting := signal()
	cfg := Config{Entries: entries, Workers: 1}
	cfg.hooks = &hooks{slotWait: hook}
	forEachDriver(t, cfg, func(t *testing.T, d Driver) {
		// A's Done holds the reaper (or the only worker), so nothing
		// submitted after it can be freed until it returns.
		b := newBlocker()
		if err := d.Submit([]*Completion{{Op: OpNop, Done: b.done}}); err != nil {
			t.Fatal(err)
		}
		await(t, b.entered, "the blocking Done")
		rec := newRecorder(entries + 1)
		for range entries {
			if err := d.Submit([]*Completion{{Op: OpNop, Done: rec.done}}); err != nil {
				t.Fatal(err)
			}
		}
		submitted := make(chan error, 1)
		go func() { submitted <- d.Submit([]*Completion{{Op: OpNop, Done: rec.done}}) }()
		await(t, waiting, "Submit to block for a slot")
		select {
		case err := <-submitted:
			t.Fatalf("Submit returned (%v) while every slot was in flight", err)
		default:
		}
		close(b.release)
		if err := await(t, submitted, "the blocked Submit"); err != nil {
			t.Fatal(err)
		}
		rec.waitN(t, entries+1)
	})
}

func TestConcurrentSubmittersSeeEachCompletionOnce(t *testing.T) {
	const goroutines, perG, width = 8, 150, 8
	forEachDriver(t, Config{Entries: 16, Workers: 3}, func(t *testing.T, d Driver) {
		_, fd := tempFile(t, t.TempDir())
		seen := make([]atomic.Int32, goroutines*perG)
		var wg sync.WaitGroup
		wg.Add(goroutines * perG)
		done := func(c *Completion) {
			if seen[c.Tag].Add(1) != 1 {
				t.Errorf("completion %d seen twice", c.Tag)
			}
			if c.Op == OpWrite && c.Res != width {
				t.Errorf("completion %d: Res %d", c.Tag, c.Res)
			}
			wg.Done()
		}
		var subs sync.WaitGroup
		for g := range goroutines {
			subs.Add(1)
			go func() {
				defer subs.Done()
				submitMixed(t, d, fd, g*perG, perG, done)
			}()
		}
		subs.Wait()
		wg.Wait()
		checkTagsWritten(t, d, fd, goroutines*perG)
	})
}

// submitMixed submits n 8-byte writes tagged from first, in batches of 1
// to 5; every other batch is one linked chain.
func submitMixed(t *testing.T, d Driver, fd, first, n int, done func(*Completion)) {
	cs := make([]*Completion, n)
	for i := range cs {
		tag := first + i
		buf := make([]byte, 8)
		for j := range buf {
			buf[j] = byte(tag >> (8 * (j % 4)))
		}
		cs[i] = &Completion{Op: OpWrite, FD: fd, Off: int64(tag) * 8, Buf: buf, Tag: uint64(tag), Done: done}
	}
	for i := 0; i < n; {
		k := min(1+i%5, n-i)
		batch := cs[i : i+k]
		for j, c := range batch {
			c.Link = j < k-1 && i%2 == 0
		}
		if err := d.Submit(batch); err != nil {
			t.Error(err)
			return
		}
		i += k
	}
}

func checkTagsWritten(t *testing.T, d Driver, fd, n int) {
	t.Helper()
	got := make([]byte, n*8)
	if _, err := ReadAt(d, fd, got, 0); err != nil {
		t.Fatal(err)
	}
	for tag := range n {
		for j := range 8 {
			if got[tag*8+j] != byte(tag>>(8*(j%4))) {
				t.Fatalf("tag %d: bytes %x", tag, got[tag*8:tag*8+8])
			}
		}
	}
}

func TestBatchLargerThanTheTableGoesInRounds(t *testing.T) {
	forEachDriver(t, Config{Entries: 4}, func(t *testing.T, d Driver) {
		rec := newRecorder(20)
		cs := make([]*Completion, 20)
		for i := range cs {
			cs[i] = &Completion{Op: OpNop, Tag: uint64(i), Link: i%4 < 3, Done: rec.done}
		}
		if err := d.Submit(cs); err != nil {
			t.Fatal(err)
		}
		got := rec.waitN(t, 20)
		if len(got) != 20 {
			t.Fatalf("%d completions", len(got))
		}
	})
}

func TestCloseWaitsForInFlightOperations(t *testing.T) {
	hook, closing := signal()
	cfg := Config{Entries: 32}
	cfg.hooks = &hooks{closeWait: hook}
	forEachDriver(t, cfg, func(t *testing.T, d Driver) {
		_, fd := tempFile(t, t.TempDir())
		var completed atomic.Int32
		count := func(*Completion) { completed.Add(1) }
		for i := range 50 {
			w := &Completion{Op: OpWrite, FD: fd, Off: int64(i) * 512, Buf: fill(512, byte(i)), Link: true, Done: count}
			s := &Completion{Op: OpFdatasync, FD: fd, Done: count}
			if err := d.Submit([]*Completion{w, s}); err != nil {
				t.Fatal(err)
			}
		}
		b := newBlocker()
		if err := d.Submit([]*Completion{{Op: OpNop, Done: b.done}}); err != nil {
			t.Fatal(err)
		}
		await(t, b.entered, "the blocking Done")
		closed := make(chan error, 1)
		go func() { closed <- d.Close() }()
		await(t, closing, "Close to start waiting")
		select {
		case err := <-closed:
			t.Fatalf("Close returned (%v) while a Done was running", err)
		default:
		}
		close(b.release)
		if err := await(t, closed, "Close"); err != nil {
			t.Fatal(err)
		}
		select {
		case <-b.finished:
		default:
			t.Fatal("Close returned before the last Done did")
		}
		if n := completed.Load(); n != 100 {
			t.Fatalf("%d of 100 completions before Close returned", n)
		}
	})
}

func TestSubmitAfterCloseIsErrClosed(t *testing.T) {
	forEachDriver(t, Config{}, func(t *testing.T, d Driver) {
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		if err := d.Submit([]*Completion{{Op: OpNop}}); !errors.Is(err, ErrClosed) {
			t.Fatalf("Submit after Close: %v", err)
		}
		if err := d.Close(); !errors.Is(err, ErrClosed) {
			t.Fatalf("second Close: %v", err)
		}
		if _, err := WriteAt(d, 0, []byte("x"), 0); !errors.Is(err, ErrClosed) {
			t.Fatalf("WriteAt after Close: %v", err)
		}
	})
}

func TestSubmitRefusesBadBatchesBeforeQueueing(t *testing.T) {
	forEachDriver(t, Config{Entries: 4}, func(t *testing.T, d Driver) {
		rec := newRecorder(8)
		chain := func(n int) []*Completion {
			cs := make([]*Completion, n)
			for i := range cs {
				cs[i] = &Completion{Op: OpNop, Link: i < n-1, Done: rec.done}
			}
			return cs
		}
		if err := d.Submit(chain(5)); !errors.Is(err, ErrChainTooLong) {
			t.Errorf("chain of 5 with 4 entries: %v", err)
		}
		if err := d.Submit(chain(4)); err != nil {
			t.Errorf("chain of 4 with 4 entries: %v", err)
		}
		rec.waitN(t, 4)
		bad := map[string]struct {
			c    *Completion
			want error
		}{
			"65 iovecs":       {&Completion{Op: OpWritev, Bufs: make([][]byte, MaxIovecs+1)}, ErrTooManyIovecs},
			"negative offset": {&Completion{Op: OpRead, Off: -1, Buf: make([]byte, 1)}, ErrInvalid},
			"unknown op":      {&Completion{Op: Op(99)}, ErrInvalid},
			"nil":             {nil, ErrInvalid},
		}
		for name, tc := range bad {
			if err := d.Submit([]*Completion{{Op: OpNop, Done: rec.done}, tc.c}); !errors.Is(err, tc.want) {
				t.Errorf("%s: %v, want %v", name, err, tc.want)
			}
		}
		select {
		case c := <-rec.each:
			t.Errorf("an operation of a refused batch ran: %v", c.Op)
		default:
		}
	})
}

func TestSyncHelpersReportErrors(t *testing.T) {
	forEachDriver(t, Config{}, func(t *testing.T, d Driver) {
		rw, _ := tempFile(t, t.TempDir())
		ro, err := os.Open(rw.Name())
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		if _, err := WriteAt(d, int(ro.Fd()), []byte("x"), 0); err == nil {
			t.Error("WriteAt to a read-only file succeeded")
		}
		if _, err := WriteAtSync(d, int(ro.Fd()), []byte("x"), 0); err == nil {
			t.Error("WriteAtSync to a read-only file succeeded")
		}
		if n, err := ReadAt(d, int(ro.Fd()), make([]byte, 4), 0); n != 0 || err != io.EOF {
			t.Errorf("ReadAt of an empty file = %d, %v", n, err)
		}
		wo, err := os.OpenFile(filepath.Join(t.TempDir(), "wo"), os.O_WRONLY|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer wo.Close()
		if _, err := ReadAt(d, int(wo.Fd()), make([]byte, 4), 0); err == nil || err == io.EOF {
			t.Errorf("ReadAt of a write-only file: %v", err)
		}
	})
}

func tags(cs []*Completion) []uint64 {
	out := make([]uint64, len(cs))
	for i, c := range cs {
		out[i] = c.Tag
	}
	return out
}
