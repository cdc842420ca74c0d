package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// felix serve on a data directory it cannot write says so, naming the
// directory and what to do, before any of its files fails on its own (the
// lock, "recovery.point: file exists").
func TestServeOnADataDirectoryItCannotWriteSaysSo(t *testing.T) {
	dir := unwritableDir(t)
	flags := map[string]string{"addr": "127.0.0.1:0", "admin-addr": "", "data": dir, "log-format": "text", "log-level": "error"}
	b, err := startBroker(configOf(t, flags))
	if err == nil {
		b.Stop(t.Context())
		t.Fatal("felix serve started on a data directory it cannot write")
	}
	var ro *readOnlyDataError
	if !errors.As(err, &ro) {
		t.Fatalf("%v: want the data directory named as not writable", err)
	}
	msg := explain(err)
	contains(t, msg, "the data directory "+dir, "--data")
	if !strings.Contains(msg, "read-only file system") && !strings.Contains(msg, "not writable") {
		t.Fatalf("%s: says neither read-only nor not writable", msg)
	}
	if strings.Contains(msg, "recovery.point") || strings.Contains(msg, "felix.lock") {
		t.Fatalf("%s: the message is one file's failure, not the directory's", msg)
	}
}

// unwritableDir is a directory this process cannot write: its permissions
// taken away, or, for root (whom permissions do not stop), a read-only
// bind mount where the system allows one.
func unwritableDir(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	if !writable(dir) {
		return dir
	}
	ro, ok := readOnlyMount(t, dir)
	if !ok || writable(ro) {
		t.Skip("permissions do not stop this process and no read-only mount can be made")
	}
	return ro
}

func writable(dir string) bool {
	p := filepath.Join(dir, "w")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		return false
	}
	os.Remove(p)
	return true
}

// The two refusals a data directory meets are told apart: a read-only file
// system, and permissions; anything else stays as it was.
func TestADataDirectoryRefusalIsClassified(t *testing.T) {
	pe := func(err error) error { return &fs.PathError{Op: "open", Path: "/d/f", Err: err} }
	var ro *readOnlyDataError
	if err := notWritable("/d", pe(syscall.EROFS)); !errors.As(err, &ro) || !ro.readOnly ||
		!strings.Contains(err.Error(), "/d is on a read-only file system") || !strings.Contains(err.Error(), "remount it read-write") {
		t.Fatalf("EROFS: %v", err)
	}
	if err := notWritable("/d", pe(syscall.EACCES)); !errors.As(err, &ro) || ro.readOnly ||
		!strings.Contains(err.Error(), "/d is not writable") || !strings.Contains(err.Error(), "chmod u+w") {
		t.Fatalf("EACCES: %v", err)
	}
	if err := notWritable("/d", pe(syscall.ENOSPC)); errors.As(err, &ro) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("ENOSPC: %v, want it as it was", err)
	}
}
