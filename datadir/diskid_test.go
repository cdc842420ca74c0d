package datadir

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestADiskIDIsDrawnOnceAndKept(t *testing.T) {
	dir := t.TempDir()
	first, err := DiskID(dir)
	if err != nil || len(first) != 2*diskIDBytes {
		t.Fatalf("first: %q %v", first, err)
	}
	again, err := DiskID(dir)
	if err != nil || again != first {
		t.Fatalf("reopened: %q %v, want %q", again, err, first)
	}
}

func TestAWipedDiskGetsANewID(t *testing.T) {
	dir := t.TempDir()
	old, err := DiskID(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	fresh, err := DiskID(dir)
	if err != nil || fresh == old {
		t.Fatalf("after a wipe: %q %v (old %q)", fresh, err, old)
	}
	other, err := DiskID(t.TempDir())
	if err != nil || other == fresh || other == old {
		t.Fatalf("another disk: %q %v", other, err)
	}
}

func TestADamagedDiskIDIsRefusedNotReplaced(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, DiskIDFile)
	if err := os.WriteFile(path, []byte("not-an-id\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := DiskID(dir); !errors.Is(err, ErrDiskIDDamaged) {
		t.Fatalf("a damaged id: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "not-an-id\n" {
		t.Fatalf("the damaged file was replaced by %q", b)
	}
}
