package catalog

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/felixbroker/felix/segment/vfs"
)

// capFS is a file system of a fixed size: a write or truncate that would
// make the files hold more than capBytes fails with ENOSPC and writes
// nothing; removing a file (or renaming one over it) gives its bytes back.
type capFS struct {
	vfs.FS
	mu       sync.Mutex
	capBytes int64
	used     int64
	size     map[string]int64
}

func newCapFS(fs vfs.FS) *capFS { return &capFS{FS: fs, capBytes: 1 << 62, size: map[string]int64{}} }

// fill makes the disk full: no byte more than the files hold now.
func (c *capFS) fill() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.capBytes = c.used
}

// free gives the disk n more bytes.
func (c *capFS) free(n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.capBytes += n
}

// grow makes name size bytes when it is larger, unless the disk is full.
func (c *capFS) grow(name string, size int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if more := size - c.size[name]; more > 0 {
		if c.used+more > c.capBytes {
			return fmt.Errorf("capfs: %s: %w", name, syscall.ENOSPC)
		}
		c.used += more
		c.size[name] = size
	}
	return nil
}

func (c *capFS) drop(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.used -= c.size[name]
	delete(c.size, name)
}

func (c *capFS) Create(name string) (vfs.File, error) {
	f, err := c.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return &capFile{File: f, fs: c, name: name}, nil
}

func (c *capFS) OpenReadWrite(name string) (vfs.File, error) {
	f, err := c.FS.OpenReadWrite(name)
	if err != nil {
		return nil, err
	}
	return &capFile{File: f, fs: c, name: name}, nil
}

func (c *capFS) Remove(name string) error {
	err := c.FS.Remove(name)
	if err == nil {
		c.drop(name)
	}
	return err
}

func (c *capFS) Rename(oldname, newname string) error {
	err := c.FS.Rename(oldname, newname)
	if err == nil {
		c.drop(newname)
		c.mu.Lock()
		c.size[newname] = c.size[oldname]
		delete(c.size, oldname)
		c.mu.Unlock()
	}
	return err
}

type capFile struct {
	vfs.File
	fs   *capFS
	name string
}

func (f *capFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.grow(f.name, off+int64(len(p))); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

func (f *capFile) WriteAtSync(p []byte, off int64) (int, error) {
	if err := f.fs.grow(f.name, off+int64(len(p))); err != nil {
		return 0, err
	}
	return f.File.WriteAtSync(p, off)
}

// fullCatalog returns a catalog on a disk that is full, holding "a" and
// "b".
func fullCatalog(t *testing.T, mem *vfs.MemFS) (*capFS, *File[string, thing]) {
	t.Helper()
	fs := newCapFS(mem)
	c := open(t, fs)
	for _, n := range []string{"a", "b"} {
		if err := c.Create(thing{Name: n, Size: len(n)}); err != nil {
			t.Fatal(err)
		}
	}
	fs.fill()
	return fs, c
}

// On a full disk a Create is refused with ErrNoSpace and changes nothing,
// in memory or on disk; a Delete succeeds, writing into the reserve it
// gives up, and survives a crash.
func TestOnAFullDiskCreatesAreRefusedAndDeletesSucceed(t *testing.T) {
	mem := vfs.NewMem()
	_, c := fullCatalog(t, mem)
	if err := c.Create(thing{Name: "c"}); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("a create on a full disk: %v; want ErrNoSpace", err)
	}
	if _, ok := c.Get("c"); ok || len(open(t, mem).List()) != 2 {
		t.Fatalf("a refused create changed the catalog: %+v", c.List())
	}
	if err := c.Delete("a"); err != nil {
		t.Fatalf("a delete on a full disk: %v", err)
	}
	if list := open(t, mem.Crash(vfs.DropUnsynced)).List(); len(list) != 1 || list[0].Name != "b" {
		t.Fatalf("after the delete and a crash: %+v", list)
	}
}

// A Delete that gave up the reserve takes it back at once when what it
// removed from the list leaves room for it.
func TestADeleteTakesTheReserveBackWhenItCan(t *testing.T) {
	mem := vfs.NewMem()
	fs, c := fullCatalog(t, mem)
	if err := c.Delete("a"); err != nil {
		t.Fatal(err)
	}
	if size, err := fs.Stat(c.reservePath()); err != nil || size < reserveBytesMin {
		t.Fatalf("the reserve after a delete on a full disk: %d bytes, %v", size, err)
	}
	fs.fill()
	if err := c.Delete("b"); err != nil {
		t.Fatalf("a second delete on a full disk: %v", err)
	}
}

// Without a reserve (it could not be taken: the disk was full when the
// catalog opened) a Delete on a full disk is refused with ErrNoSpace, as
// is Reserve; once space is freed, Reserve takes it, and the disk full
// again, the Delete succeeds.
func TestReserveTakesTheReserveOnceSpaceIsFreed(t *testing.T) {
	mem := vfs.NewMem()
	fs, c := fullCatalog(t, mem)
	if err := fs.Remove(c.reservePath()); err != nil {
		t.Fatal(err)
	}
	fs.fill()
	if err := c.Delete("a"); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("a delete on a full disk with no reserve: %v; want ErrNoSpace", err)
	}
	if err := c.Reserve(); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("taking the reserve on a full disk: %v; want ErrNoSpace", err)
	}
	fs.free(1 << 20)
	if err := c.Reserve(); err != nil {
		t.Fatalf("taking the reserve once space is freed: %v", err)
	}
	fs.fill()
	if err := c.Delete("a"); err != nil {
		t.Fatalf("a delete on a full disk with the reserve back: %v", err)
	}
	if list := open(t, mem.Crash(vfs.DropUnsynced)).List(); len(list) != 1 || list[0].Name != "b" {
		t.Fatalf("after the delete and a crash: %+v", list)
	}
}

// A crash at any step of a Delete on a full disk (the reserve given up,
// the list written into its space) leaves the old list or the new one.
func TestACrashDuringADeleteOnAFullDiskLeavesTheOldOrTheNewList(t *testing.T) {
	for n := 1; ; n++ {
		mem := vfs.NewMem()
		_, c := fullCatalog(t, mem)
		mem.SetCrashAfter(n, vfs.DropUnsynced)
		err := c.Delete("a")
		if !mem.Crashed() {
			if err != nil {
				t.Fatalf("a delete on a full disk: %v", err)
			}
			return
		}
		got := open(t, mem.CrashImage()).List()
		old := len(got) == 2 && got[0].Name == "a" && got[1].Name == "b"
		fresh := len(got) == 1 && got[0].Name == "b"
		if !old && !fresh {
			t.Fatalf("crash after mutation %d: %+v", n, got)
		}
	}
}

// A Create never spends the space a Delete needs: when the list it would
// write outgrows what the reserve covers and the reserve cannot grow, it
// is refused with ErrNoSpace, though the list itself would still fit.
func TestACreateIsRefusedWhenTheReserveCannotCoverTheListItWrites(t *testing.T) {
	mem := vfs.NewMem()
	fs := newCapFS(mem)
	c := open(t, fs)
	long := strings.Repeat("x", 200)
	var next thing
	var list []byte
	for i := 0; ; i++ {
		next = thing{Name: fmt.Sprint(long, i)}
		list = listWith(c, next)
		if size, _ := fs.Stat(c.reservePath()); int64(len(list))+reserveSlackBytes > size {
			break // the next create must grow the reserve
		}
		if err := c.Create(next); err != nil {
			t.Fatal(err)
		}
	}
	fs.fill()
	fs.free(int64(len(list)) + 2<<10) // room for the list once more, not for a larger reserve
	if err := c.Create(next); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("a create the reserve could not cover: %v; want ErrNoSpace", err)
	}
	if _, ok := c.Get(next.Name); ok {
		t.Fatal("the refused create is in the catalog")
	}
}

// listWith is the catalog's file as it would be with e added.
func listWith(c *File[string, thing], e thing) []byte {
	c.entries[e.Name] = e
	defer delete(c.entries, e.Name)
	b, _ := c.encode()
	return b
}
