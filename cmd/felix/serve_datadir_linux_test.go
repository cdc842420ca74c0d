package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// readOnlyMount binds dir read-only at a new path, unmounted at cleanup;
// false where the process may not mount.
func readOnlyMount(t *testing.T, dir string) (string, bool) {
	at := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(at, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount(dir, at, "", syscall.MS_BIND, ""); err != nil {
		return "", false
	}
	t.Cleanup(func() { syscall.Unmount(at, 0) })
	if err := syscall.Mount("", at, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""); err != nil {
		return "", false
	}
	return at, true
}
