//go:build unix

package vfs

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/felixbroker/felix/ring"
)

// osDriver is one driver the OS FS tests run over.
type osDriver struct {
	name string
	d    ring.Driver // nil when this machine refuses it
	why  error       // why d is nil
}

// osDrivers opens every real driver, closed when tb ends. A driver the
// kernel refuses (io_uring under seccomp, or off Linux) comes back with a
// nil d and the reason: use run, which skips it.
func osDrivers(tb testing.TB) []osDriver {
	var ds []osDriver
	for _, mode := range []ring.Mode{ring.ModeUring, ring.ModePortable} {
		d, err := ring.Open(ring.Config{Mode: mode})
		if err != nil && !errors.Is(err, ring.ErrUnavailable) {
			tb.Fatalf("ring.Open(%v): %v", mode, err)
		}
		if d != nil {
			tb.Cleanup(func() { _ = d.Close() })
		}
		ds = append(ds, osDriver{name: mode.String(), d: d, why: err})
	}
	return ds
}

// runOverDrivers runs test once per real driver, as subtests.
func runOverDrivers(t *testing.T, test func(t *testing.T, d ring.Driver)) {
	for _, d := range osDrivers(t) {
		t.Run(d.name, func(t *testing.T) {
			if d.d == nil {
				t.Skipf("driver unavailable here: %v", d.why)
			}
			test(t, d.d)
		})
	}
}

func TestOSConformance(t *testing.T) {
	runOverDrivers(t, func(t *testing.T, d ring.Driver) { testConformance(t, NewOS(d), t.TempDir()) })
}

func TestOSWriteAtSyncOverRealDrivers(t *testing.T) {
	runOverDrivers(t, func(t *testing.T, d ring.Driver) {
		fsys := NewOS(d)
		name := filepath.Join(t.TempDir(), "f")
		f := create(t, fsys, name)
		defer closeFile(t, f)
		p := make([]byte, 1<<20)
		for i := range p {
			p[i] = byte(i * 7)
		}
		for off := int64(0); off < 4<<20; off += int64(len(p)) {
			if n, err := f.WriteAtSync(p, off); n != len(p) || err != nil {
				t.Fatalf("WriteAtSync at %d = %d, %v", off, n, err)
			}
		}
		got := readFile(t, fsys, name)
		for off := 0; off < len(got); off += len(p) {
			if !bytes.Equal(got[off:off+len(p)], p) {
				t.Fatalf("the block at %d differs", off)
			}
		}
	})
}

func TestOSMkdirAllAndSyncDir(t *testing.T) {
	fsys, root := NewOS(&syncDriver{}), t.TempDir()
	dir := filepath.Join(root, "a", "b", "c")
	must(t, fsys.MkdirAll(dir))
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		t.Fatalf("MkdirAll made no directory: %v", err)
	}
	must(t, fsys.SyncDir(dir))
	closeFile(t, create(t, fsys, filepath.Join(dir, "f")))
	if err := fsys.SyncDir(filepath.Join(dir, "f")); !errors.Is(err, syscall.ENOTDIR) {
		t.Fatalf("SyncDir of a file: %v, want ENOTDIR", err)
	}
	names, err := fsys.List(filepath.Join(root, "a"))
	if err != nil || !slices.Equal(names, []string{"b"}) {
		t.Fatalf("List = %q, %v", names, err)
	}
}

func TestOSWriteAtSyncIsOneLinkedSubmit(t *testing.T) {
	d := &syncDriver{}
	f := create(t, NewOS(d), filepath.Join(t.TempDir(), "f"))
	defer closeFile(t, f)
	if n, err := f.WriteAtSync([]byte("abc"), 0); n != 3 || err != nil {
		t.Fatalf("WriteAtSync = %d, %v", n, err)
	}
	submits, ops, links := d.batch()
	if submits != 1 || !slices.Equal(ops, []ring.Op{ring.OpWrite, ring.OpFdatasync}) ||
		!slices.Equal(links, []bool{true, false}) {
		t.Fatalf("%d submits, last %v linked %v; want 1: write linked to fdatasync", submits, ops, links)
	}
}

func TestOSShortWritesAreFinished(t *testing.T) {
	d := &syncDriver{writeMax: 3}
	fsys := NewOS(d)
	name := filepath.Join(t.TempDir(), "f")
	f := create(t, fsys, name)
	defer closeFile(t, f)
	writeAt(t, f, []byte("0123456789"), 0)
	if submits, _, _ := d.batch(); submits != 4 {
		t.Fatalf("WriteAt of 10 bytes, 3 a write: %d submits, want 4", submits)
	}
	if n, err := f.WriteAtSync([]byte("abcdefg"), 10); n != 7 || err != nil {
		t.Fatalf("WriteAtSync = %d, %v", n, err)
	}
	// The linked pair (3 bytes, sync cancelled), two writes for the other
	// 4 bytes, and a sync of its own.
	if submits, ops, _ := d.batch(); submits != 4+4 || !slices.Equal(ops, []ring.Op{ring.OpFdatasync}) {
		t.Fatalf("%d submits, last %v; want 8, ending with a lone fdatasync", submits, ops)
	}
	if got := readFile(t, fsys, name); string(got) != "0123456789abcdefg" {
		t.Fatalf("file = %q", got)
	}
}

func TestOSDriverErrorsMatchErrno(t *testing.T) {
	d := &syncDriver{fail: map[ring.Op]syscall.Errno{}}
	f := create(t, NewOS(d), filepath.Join(t.TempDir(), "f"))
	defer closeFile(t, f)
	d.fail[ring.OpWrite] = syscall.ENOSPC
	if _, err := f.WriteAt([]byte("x"), 0); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("WriteAt: %v, want ENOSPC", err)
	}
	if n, err := f.WriteAtSync([]byte("x"), 0); n != 0 || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("WriteAtSync = %d, %v; want 0, ENOSPC", n, err)
	}
	delete(d.fail, ring.OpWrite)
	d.fail[ring.OpFdatasync] = syscall.EIO
	if err := f.Sync(); !errors.Is(err, syscall.EIO) {
		t.Errorf("Sync: %v, want EIO", err)
	}
	if n, err := f.WriteAtSync([]byte("x"), 0); n != 1 || !errors.Is(err, syscall.EIO) {
		t.Errorf("WriteAtSync = %d, %v; want 1, EIO", n, err)
	}
	d.fail[ring.OpRead] = syscall.EIO
	if _, err := f.ReadAt(make([]byte, 1), 0); !errors.Is(err, syscall.EIO) {
		t.Errorf("ReadAt: %v, want EIO", err)
	}
}

func TestOSDataCallsAllocateNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	runOverDrivers(t, func(t *testing.T, d ring.Driver) {
		f := create(t, NewOS(d), filepath.Join(t.TempDir(), "f"))
		defer closeFile(t, f)
		buf := make([]byte, 4096)
		calls := map[string]func(){
			"WriteAt":     func() { _, _ = f.WriteAt(buf, 0) },
			"ReadAt":      func() { _, _ = f.ReadAt(buf, 0) },
			"Sync":        func() { _ = f.Sync() },
			"WriteAtSync": func() { _, _ = f.WriteAtSync(buf, 4096) },
		}
		for name, call := range calls {
			if allocs := testing.AllocsPerRun(100, call); allocs != 0 {
				t.Errorf("%s: %v allocations per call, want 0", name, allocs)
			}
		}
	})
}
