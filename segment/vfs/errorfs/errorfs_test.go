package errorfs

import (
	"errors"
	"io"
	"sync"
	"syscall"
	"testing"

	"github.com/felixbroker/felix/segment/vfs"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// setup returns an errorfs over a MemFS holding /d/a and /d/b, both open.
func setup(t *testing.T) (*FS, *vfs.MemFS, vfs.File, vfs.File) {
	t.Helper()
	mem := vfs.NewMem()
	fsys := Wrap(mem)
	must(t, fsys.MkdirAll("/d"))
	a, err := fsys.Create("/d/a")
	must(t, err)
	b, err := fsys.Create("/d/b")
	must(t, err)
	return fsys, mem, a, b
}

func TestNthMatchingCallFailsOnce(t *testing.T) {
	fsys, _, a, _ := setup(t)
	fsys.Inject(Rule{Op: Sync, Nth: 3, Err: syscall.EIO})
	for i := 1; i <= 5; i++ {
		err := a.Sync()
		if fails := i == 3; fails != (err != nil) {
			t.Fatalf("Sync %d: %v", i, err)
		}
		if i == 3 && (!errors.Is(err, syscall.EIO) || !errors.Is(err, ErrInjected)) {
			t.Fatalf("Sync 3: %v, want EIO and ErrInjected", err)
		}
	}
	if fsys.Injected() != 1 {
		t.Fatalf("Injected = %d, want 1", fsys.Injected())
	}
}

func TestEveryCallRuleAndClear(t *testing.T) {
	fsys, _, a, b := setup(t)
	fsys.Inject(Rule{Op: Write, Err: syscall.ENOSPC})
	for range 3 {
		for _, f := range []vfs.File{a, b} {
			if n, err := f.WriteAt([]byte("x"), 0); n != 0 || !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("WriteAt = %d, %v; want 0, ENOSPC", n, err)
			}
		}
	}
	if _, err := a.WriteAtSync([]byte("x"), 0); err != nil {
		t.Fatalf("a Write rule failed WriteAtSync: %v", err)
	}
	fsys.Clear()
	if _, err := a.WriteAt([]byte("x"), 0); err != nil {
		t.Fatalf("WriteAt after Clear: %v", err)
	}
}

func TestPathContains(t *testing.T) {
	fsys, _, a, b := setup(t)
	fsys.Inject(Rule{Op: Any, PathContains: "/b", Err: syscall.EIO})
	if err := a.Sync(); err != nil {
		t.Fatalf("a call on /d/a failed: %v", err)
	}
	if err := b.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Sync of /d/b: %v, want EIO", err)
	}
	if err := fsys.Rename("/d/a", "/d/b"); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Rename onto /d/b: %v, want EIO", err)
	}
	if _, err := fsys.Stat("/d/a"); err != nil {
		t.Fatalf("the failed Rename reached the FS: %v", err)
	}
}

func TestShortWriteWritesThePrefixUnsynced(t *testing.T) {
	for _, op := range []OpKind{Write, WriteSync} {
		t.Run(op.String(), func(t *testing.T) {
			fsys, mem, a, _ := setup(t)
			must(t, fsys.SyncDir("/d"))
			fsys.Inject(Rule{Op: op, Nth: 1, ShortBy: 3})
			var n int
			var err error
			if op == Write {
				n, err = a.WriteAt([]byte("abcdefgh"), 0)
			} else {
				n, err = a.WriteAtSync([]byte("abcdefgh"), 0)
			}
			if n != 5 || !errors.Is(err, io.ErrShortWrite) {
				t.Fatalf("= %d, %v; want 5, io.ErrShortWrite", n, err)
			}
			checkFile(t, fsys, "/d/a", "abcde")
			checkFile(t, mem.Crash(vfs.DropUnsynced), "/d/a", "") // not synced
		})
	}
}

func TestShortWriteWithErrAndShortByPastTheLength(t *testing.T) {
	fsys, _, a, _ := setup(t)
	fsys.Inject(Rule{Op: Write, Nth: 1, ShortBy: 1, Err: syscall.ENOSPC})
	fsys.Inject(Rule{Op: Write, Nth: 2, ShortBy: 10})
	if n, err := a.WriteAt([]byte("xy"), 0); n != 1 || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("= %d, %v; want 1, ENOSPC", n, err)
	}
	if n, err := a.WriteAt([]byte("zz"), 0); n != 0 || !errors.Is(err, io.ErrShortWrite) {
		t.Fatalf("= %d, %v; want 0, io.ErrShortWrite", n, err)
	}
	checkFile(t, fsys, "/d/a", "x")
}

func TestRulesCountIndependently(t *testing.T) {
	fsys, _, a, _ := setup(t)
	fsys.Inject(Rule{Op: Any, Nth: 2, Err: syscall.EIO})
	fsys.Inject(Rule{Op: Sync, Nth: 2, Err: syscall.ENOSPC})
	fsys.Inject(Rule{Op: Sync, Nth: 1, Err: syscall.EBADF})
	// Call 1 (Sync): Any sees 1, Sync#2 sees 1, Sync#1 sees 1 and fires.
	if err := a.Sync(); !errors.Is(err, syscall.EBADF) {
		t.Fatalf("call 1: %v, want EBADF", err)
	}
	// Call 2 (Sync): Any and Sync#2 both fire; the first injected wins.
	if err := a.Sync(); !errors.Is(err, syscall.EIO) || errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("call 2: %v, want EIO only", err)
	}
	if err := a.Sync(); err != nil {
		t.Fatalf("call 3: every rule is spent, got %v", err)
	}
}

func TestDefaultErrIsEIOAndEveryOpKindIsWired(t *testing.T) {
	fsys, _, a, _ := setup(t)
	calls := map[OpKind]func() error{
		Write:       func() error { return second(a.WriteAt([]byte("x"), 0)) },
		WriteSync:   func() error { return second(a.WriteAtSync([]byte("x"), 0)) },
		Sync:        a.Sync,
		Create:      func() error { return second(fsys.Create("/d/new")) },
		Remove:      func() error { return fsys.Remove("/d/b") },
		Rename:      func() error { return fsys.Rename("/d/b", "/d/c") },
		SyncDir:     func() error { return fsys.SyncDir("/d") },
		Truncate:    func() error { return a.Truncate(0) },
		Preallocate: func() error { return a.Preallocate(0, 1) },
		Read:        func() error { return second(a.ReadAt(make([]byte, 1), 0)) },
		Open:        func() error { return second(fsys.Open("/d/a")) },
		MkdirAll:    func() error { return fsys.MkdirAll("/e") },
		List:        func() error { return second(fsys.List("/d")) },
		Stat:        func() error { return second(a.Size()) },
	}
	for op, call := range calls {
		fsys.Clear()
		fsys.Inject(Rule{Op: op})
		err := call()
		var injected *InjectedError
		if !errors.As(err, &injected) || injected.Op != op || !errors.Is(err, syscall.EIO) {
			t.Errorf("%v: %v, want an injected EIO", op, err)
		}
	}
	if len(calls) != int(Any)-1 {
		t.Fatalf("%d kinds tested, want %d", len(calls), Any-1)
	}
	fsys.Clear()
	fsys.Inject(Rule{Op: Any})
	for op, call := range calls {
		if err := call(); !errors.Is(err, ErrInjected) {
			t.Errorf("Any did not fail %v: %v", op, err)
		}
	}
}

func TestInjectRefusesNonsense(t *testing.T) {
	for _, r := range []Rule{{}, {Op: Any + 1}, {Op: Write, Nth: -1}, {Op: Write, ShortBy: -1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Inject(%+v) did not panic", r)
				}
			}()
			Wrap(vfs.NewMem()).Inject(r)
		}()
	}
}

func TestConcurrentCallsCountEveryMatch(t *testing.T) {
	fsys, _, a, _ := setup(t)
	fsys.Inject(Rule{Op: Read, Nth: 50, Err: syscall.EIO})
	var wg sync.WaitGroup
	var mu sync.Mutex
	failures := 0
	for range 4 {
		wg.Go(func() {
			for range 25 {
				if _, err := a.ReadAt(nil, 0); errors.Is(err, syscall.EIO) {
					mu.Lock()
					failures++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if failures != 1 {
		t.Fatalf("%d of 100 reads failed, want exactly the 50th", failures)
	}
}

func second[T any](_ T, err error) error { return err }

func checkFile(t *testing.T, fsys vfs.FS, name, want string) {
	t.Helper()
	f, err := fsys.Open(name)
	must(t, err)
	defer f.Close()
	size, err := f.Size()
	must(t, err)
	buf := make([]byte, size)
	if _, err := f.ReadAt(buf, 0); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	if string(buf) != want {
		t.Fatalf("%s holds %q, want %q", name, buf, want)
	}
}
