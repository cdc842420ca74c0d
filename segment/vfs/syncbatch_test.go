//go:build unix

package vfs

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/felixbroker/felix/ring"
)

// fdFailDriver runs writes and fdatasyncs on the submitting goroutine and
// fails the fdatasyncs of one fd with EIO; it counts Submits and the size of
// the last batch.
type fdFailDriver struct {
	failFD  int
	submits int
	last    int
}

func (d *fdFailDriver) Kind() ring.Kind { return "fd-fail-test" }
func (d *fdFailDriver) Close() error    { return nil }

func (d *fdFailDriver) Submit(cs []*ring.Completion) error {
	d.submits++
	d.last = len(cs)
	for _, c := range cs {
		switch {
		case c.Op == ring.OpWrite:
			n, err := syscall.Pwrite(c.FD, c.Buf, c.Off)
			c.Res = int32(n)
			if err != nil {
				c.Res = -int32(err.(syscall.Errno))
			}
		case c.Op != ring.OpFdatasync:
			c.Res = -int32(syscall.EINVAL)
		case c.FD == d.failFD:
			c.Res = -int32(syscall.EIO)
		default:
			if err := syscall.Fdatasync(c.FD); err != nil {
				c.Res = -int32(err.(syscall.Errno))
			}
		}
		c.Done(c)
	}
	return nil
}

func createFiles(t *testing.T, fs FS, n int) []File {
	t.Helper()
	dir := t.TempDir()
	files := make([]File, n)
	for i := range files {
		f, err := fs.Create(filepath.Join(dir, string(rune('a'+i))))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if _, err := f.WriteAt([]byte("data"), 0); err != nil {
			t.Fatal(err)
		}
		files[i] = f
	}
	return files
}

// Every real driver syncs a batch of files with one Submit, and a batch
// is reused.
func TestSyncBatchSyncsEveryFileOnEachDriver(t *testing.T) {
	for _, od := range osDrivers(t) {
		t.Run(od.name, func(t *testing.T) {
			if od.d == nil {
				t.Skip(od.why)
			}
			files := createFiles(t, NewOS(od.d), 5)
			var b SyncBatch
			for round := range 3 {
				b.Reset()
				for _, f := range files[:2+round] {
					b.Add(f)
				}
				b.Run()
				for i := range b.Len() {
					if err := b.Err(i); err != nil {
						t.Fatalf("round %d file %d: %v", round, i, err)
					}
				}
			}
		})
	}
}

// One file's failing sync is that file's error alone, and the batch went
// to the driver as one Submit.
func TestSyncBatchFailsOnlyTheFileWhoseSyncFailed(t *testing.T) {
	d := &fdFailDriver{}
	files := createFiles(t, NewOS(d), 3)
	d.failFD, d.submits = files[1].(*osFile).fd, 0
	var b SyncBatch
	for _, f := range files {
		b.Add(f)
	}
	b.Run()
	if d.submits != 1 || d.last != 3 {
		t.Fatalf("%d submits, last of %d; want one of 3", d.submits, d.last)
	}
	for i := range files {
		err := b.Err(i)
		if i == 1 && !errors.Is(err, syscall.EIO) {
			t.Fatalf("file 1: %v, want EIO", err)
		}
		if i != 1 && err != nil {
			t.Fatalf("file %d: %v", i, err)
		}
	}
}

// A closed driver fails every file of the batch; files of other file
// systems are synced one by one, durably.
func TestSyncBatchOnAClosedDriverAndOnMemFS(t *testing.T) {
	d, err := ring.Open(ring.Config{Mode: ring.ModePortable})
	if err != nil {
		t.Fatal(err)
	}
	files := createFiles(t, NewOS(d), 2)
	d.Close()
	var b SyncBatch
	for _, f := range files {
		b.Add(f)
	}
	b.Run()
	for i := range files {
		if !errors.Is(b.Err(i), ring.ErrClosed) {
			t.Fatalf("file %d after Close: %v", i, b.Err(i))
		}
	}

	mem := NewMem()
	if err := mem.MkdirAll("/d"); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	for _, name := range []string{"/d/a", "/d/b"} {
		f, err := mem.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt([]byte(name), 0); err != nil {
			t.Fatal(err)
		}
		b.Add(f)
	}
	if err := mem.SyncDir("/d"); err != nil {
		t.Fatal(err)
	}
	b.Run()
	img := mem.Crash(DropUnsynced)
	for i, name := range []string{"/d/a", "/d/b"} {
		if b.Err(i) != nil {
			t.Fatal(b.Err(i))
		}
		if size, err := img.Stat(name); err != nil || size != int64(len(name)) {
			t.Fatalf("%s after the crash: size %d, %v", name, size, err)
		}
	}
}
