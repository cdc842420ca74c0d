package workload

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// assertEmpty fails when a workload left anything in dir.
func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("left behind: %s", e.Name())
	}
}

// wantNoCaches fails when a cache of the tenant bench is left on tg.
func wantNoCaches(t *testing.T, tg Target) {
	t.Helper()
	assertAbsentOrEmpty(t, filepath.Join(tg.DataDir, "caches", "bench"))
}

// wantNoStreams fails when a stream of the tenant bench (and so any of
// its groups) is left on tg.
func wantNoStreams(t *testing.T, tg Target) {
	t.Helper()
	assertAbsentOrEmpty(t, filepath.Join(tg.DataDir, "streams", "bench"))
}

func assertAbsentOrEmpty(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		sub, _ := os.ReadDir(filepath.Join(dir, e.Name()))
		for _, s := range sub {
			t.Errorf("left behind: %s", filepath.Join(dir, e.Name(), s.Name()))
		}
	}
}
