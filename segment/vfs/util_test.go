package vfs

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
)

func TestRemoveAllRemovesATreeDurably(t *testing.T) {
	mem := NewMem()
	mem.MkdirAll("/d/a/b")
	for _, p := range []string{"/d/x", "/d/a/y", "/d/a/b/z"} {
		f, err := mem.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteAtSync([]byte("v"), 0)
		f.Close()
		mem.SyncDir(filepath.Dir(p))
	}
	if err := mem.RemoveDir("/d/a"); !errors.Is(err, syscall.ENOTEMPTY) {
		t.Fatalf("RemoveDir of a non-empty dir: %v", err)
	}
	if err := mem.RemoveDir("/d/x"); !errors.Is(err, syscall.ENOTDIR) {
		t.Fatalf("RemoveDir of a file: %v", err)
	}
	if err := RemoveAll(mem, "/d"); err != nil {
		t.Fatal(err)
	}
	if err := RemoveAll(mem, "/d"); err != nil {
		t.Fatalf("removing what is gone: %v", err)
	}
	img := mem.Crash(DropUnsynced)
	if names, _ := img.List("/"); len(names) != 0 {
		t.Fatalf("after a crash the tree is back: %v", names)
	}
}

func TestRemoveAllOnTheOSFS(t *testing.T) {
	fs := NewOS(&syncDriver{})
	dir := filepath.Join(t.TempDir(), "tree")
	fs.MkdirAll(filepath.Join(dir, "sub"))
	f, err := fs.Create(filepath.Join(dir, "sub", "file"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := RemoveAll(fs, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.List(dir); !errors.Is(err, ErrNotExist) {
		t.Fatalf("the tree is still there: %v", err)
	}
}
