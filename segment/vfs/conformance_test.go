package vfs

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// testConformance runs every FS method through a round trip on fsys, under
// root (an existing, empty directory). Both MemFS and the OS FS must pass.
func testConformance(t *testing.T, fsys FS, root string) {
	t.Run("MkdirAllAndList", func(t *testing.T) { conformMkdirList(t, fsys, root) })
	t.Run("CreateWriteRead", func(t *testing.T) { conformCreateWriteRead(t, fsys, root) })
	t.Run("Errors", func(t *testing.T) { conformErrors(t, fsys, root) })
	t.Run("RenameRemove", func(t *testing.T) { conformRenameRemove(t, fsys, root) })
	t.Run("SizeTruncatePreallocate", func(t *testing.T) { conformSizes(t, fsys, root) })
	t.Run("ReadOnlyAndClosed", func(t *testing.T) { conformReadOnlyClosed(t, fsys, root) })
}

func conformMkdirList(t *testing.T, fsys FS, root string) {
	dir := filepath.Join(root, "mk", "a", "b")
	must(t, fsys.MkdirAll(dir))
	must(t, fsys.MkdirAll(dir)) // existing: fine
	for _, name := range []string{"c", "a", "b"} {
		closeFile(t, create(t, fsys, filepath.Join(dir, name)))
	}
	must(t, fsys.MkdirAll(filepath.Join(dir, "d")))
	names, err := fsys.List(dir)
	must(t, err)
	if want := []string{"a", "b", "c", "d"}; !slices.Equal(names, want) {
		t.Fatalf("List = %q, want %q", names, want)
	}
	must(t, fsys.SyncDir(dir))
	if err := fsys.MkdirAll(filepath.Join(dir, "a", "x")); !errors.Is(err, syscall.ENOTDIR) {
		t.Fatalf("MkdirAll under a file: %v, want ENOTDIR", err)
	}
}

func conformCreateWriteRead(t *testing.T, fsys FS, root string) {
	name := filepath.Join(root, "rw")
	f := create(t, fsys, name)
	if f.Name() != name {
		t.Fatalf("Name = %q, want %q", f.Name(), name)
	}
	writeAt(t, f, []byte("hello"), 0)
	if n, err := f.WriteAtSync([]byte(" world"), 5); n != 6 || err != nil {
		t.Fatalf("WriteAtSync = %d, %v", n, err)
	}
	must(t, f.Sync())
	if n, err := f.WriteAtSync(nil, 0); n != 0 || err != nil {
		t.Fatalf("WriteAtSync(nil) = %d, %v", n, err)
	}
	buf := make([]byte, 11)
	if n, err := f.ReadAt(buf, 0); n != 11 || err != nil || string(buf) != "hello world" {
		t.Fatalf("ReadAt = %d, %v, %q", n, err, buf)
	}
	if n, err := f.ReadAt(buf, 6); n != 5 || err != io.EOF || string(buf[:n]) != "world" {
		t.Fatalf("ReadAt past the end = %d, %v, %q; want 5, EOF", n, err, buf[:n])
	}
	if n, err := f.ReadAt(buf, 100); n != 0 || err != io.EOF {
		t.Fatalf("ReadAt beyond the end = %d, %v; want 0, EOF", n, err)
	}
	writeAt(t, f, []byte("!"), 20) // a hole reads as zeros
	closeFile(t, f)
	want := append([]byte("hello world"), make([]byte, 9)...)
	if got := readFile(t, fsys, name); !bytes.Equal(got, append(want, '!')) {
		t.Fatalf("file = %q", got)
	}
	if size, err := fsys.Stat(name); size != 21 || err != nil {
		t.Fatalf("Stat = %d, %v; want 21", size, err)
	}
}

func conformErrors(t *testing.T, fsys FS, root string) {
	name := filepath.Join(root, "exists")
	closeFile(t, create(t, fsys, name))
	if _, err := fsys.Create(name); !errors.Is(err, ErrExist) {
		t.Fatalf("Create of an existing name: %v, want ErrExist", err)
	}
	missing := filepath.Join(root, "missing")
	checks := map[string]error{
		"Open":             second(fsys.Open(missing)),
		"OpenReadWrite":    second(fsys.OpenReadWrite(missing)),
		"Remove":           fsys.Remove(missing),
		"Rename":           fsys.Rename(missing, name+"2"),
		"List":             second(fsys.List(missing)),
		"SyncDir":          fsys.SyncDir(missing),
		"Stat":             second(fsys.Stat(missing)),
		"Create(in none)":  second(fsys.Create(filepath.Join(missing, "f"))),
		"MkdirAll(a file)": fsys.MkdirAll(name),
	}
	for call, err := range checks {
		want := ErrNotExist
		if call == "MkdirAll(a file)" {
			want = syscall.ENOTDIR
		}
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", call, err, want)
		}
	}
	dir := filepath.Join(root, "adir")
	must(t, fsys.MkdirAll(dir))
	if err := fsys.Remove(dir); err == nil {
		t.Fatal("Remove removed a directory")
	}
	if _, err := fsys.List(dir); err != nil {
		t.Fatalf("the directory Remove refused is gone: %v", err)
	}
	if _, err := fsys.Open(dir); !errors.Is(err, syscall.EISDIR) {
		t.Fatalf("Open of a directory: %v, want EISDIR", err)
	}
	if _, err := fsys.OpenReadWrite(dir); !errors.Is(err, syscall.EISDIR) {
		t.Fatalf("OpenReadWrite of a directory: %v, want EISDIR", err)
	}
}

func conformRenameRemove(t *testing.T, fsys FS, root string) {
	a, b := filepath.Join(root, "ra"), filepath.Join(root, "rb")
	f := create(t, fsys, a)
	writeAt(t, f, []byte("A"), 0)
	closeFile(t, f)
	f = create(t, fsys, b)
	writeAt(t, f, []byte("B"), 0)
	closeFile(t, f)
	must(t, fsys.Rename(a, b))
	if got := readFile(t, fsys, b); string(got) != "A" {
		t.Fatalf("after Rename onto it, %s holds %q, want A", b, got)
	}
	if _, err := fsys.Stat(a); !errors.Is(err, ErrNotExist) {
		t.Fatalf("Stat of the renamed name: %v, want ErrNotExist", err)
	}
	open, err := fsys.Open(b)
	must(t, err)
	must(t, fsys.Remove(b))
	buf := make([]byte, 1)
	if _, err := open.ReadAt(buf, 0); err != nil || buf[0] != 'A' {
		t.Fatalf("reading a removed but open file: %v, %q", err, buf)
	}
	closeFile(t, open)
	must(t, fsys.SyncDir(root))
	if _, err := fsys.Open(b); !errors.Is(err, ErrNotExist) {
		t.Fatalf("Open of a removed file: %v, want ErrNotExist", err)
	}
}

func conformSizes(t *testing.T, fsys FS, root string) {
	f := create(t, fsys, filepath.Join(root, "sz"))
	defer closeFile(t, f)
	writeAt(t, f, []byte("0123456789"), 0)
	checkSize(t, f, 10)
	must(t, f.Truncate(4))
	checkSize(t, f, 4)
	must(t, f.Truncate(8))
	checkSize(t, f, 8)
	buf := make([]byte, 8)
	if _, err := f.ReadAt(buf, 0); err != nil || string(buf) != "0123\x00\x00\x00\x00" {
		t.Fatalf("after shrink and grow: %q, %v", buf, err)
	}
	must(t, f.Preallocate(0, 1<<20))
	must(t, f.Preallocate(0, 0))
	checkSize(t, f, 8) // KEEP_SIZE
	if err := f.Preallocate(-1, 10); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Preallocate(-1): %v, want EINVAL", err)
	}
	must(t, f.Sync())
}

func conformReadOnlyClosed(t *testing.T, fsys FS, root string) {
	name := filepath.Join(root, "ro")
	closeFile(t, create(t, fsys, name))
	ro, err := fsys.Open(name)
	must(t, err)
	if _, err := ro.WriteAt([]byte("x"), 0); err == nil {
		t.Fatal("WriteAt on a read-only file succeeded")
	}
	closeFile(t, ro)
	rw, err := fsys.OpenReadWrite(name)
	must(t, err)
	writeAt(t, rw, []byte("x"), 0)
	closeFile(t, rw)
	calls := map[string]error{
		"ReadAt":      second(rw.ReadAt(make([]byte, 1), 0)),
		"WriteAt":     second(rw.WriteAt([]byte("y"), 0)),
		"WriteAtSync": second(rw.WriteAtSync([]byte("y"), 0)),
		"Sync":        rw.Sync(),
		"Truncate":    rw.Truncate(0),
		"Preallocate": rw.Preallocate(0, 1),
		"Size":        second(rw.Size()),
		"Close":       rw.Close(),
	}
	for call, err := range calls {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", call, err)
		}
	}
	if got := readFile(t, fsys, name); string(got) != "x" {
		t.Fatalf("a call after Close changed the file: %q", got)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func second[T any](_ T, err error) error { return err }

func create(t *testing.T, fsys FS, name string) File {
	t.Helper()
	f, err := fsys.Create(name)
	must(t, err)
	return f
}

func writeAt(t *testing.T, f File, p []byte, off int64) {
	t.Helper()
	if n, err := f.WriteAt(p, off); n != len(p) || err != nil {
		t.Fatalf("WriteAt = %d, %v; want %d", n, err, len(p))
	}
}

func closeFile(t *testing.T, f File) {
	t.Helper()
	must(t, f.Close())
}

func checkSize(t *testing.T, f File, want int64) {
	t.Helper()
	if size, err := f.Size(); size != want || err != nil {
		t.Fatalf("Size = %d, %v; want %d", size, err, want)
	}
}

// readFile returns a file's whole current contents.
func readFile(t *testing.T, fsys FS, name string) []byte {
	t.Helper()
	f, err := fsys.Open(name)
	must(t, err)
	defer closeFile(t, f)
	size, err := f.Size()
	must(t, err)
	buf := make([]byte, size)
	if n, err := f.ReadAt(buf, 0); n != len(buf) || (err != nil && err != io.EOF) {
		t.Fatalf("ReadAt(%s) = %d, %v; want %d", name, n, err, len(buf))
	}
	return buf
}
