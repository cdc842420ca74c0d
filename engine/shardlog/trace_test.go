package shardlog

import (
	"path/filepath"
	"sync"

	"github.com/felixbroker/felix/segment/vfs"
)

// traceFS records each mutating call with the MemFS mutation count it
// brought the FS to, so a test can aim a crash at one step of a protocol.
// Mutations from more than one goroutine at once would interleave the
// trace; tests that use it keep the log's FS work on the committer.
type traceFS struct {
	*vfs.MemFS
	mu    sync.Mutex
	steps []step
	// crashOn, when set, is asked about each step as it is noted; the FS
	// crashes (drop unsynced) right after the first step it accepts. It
	// aims a crash at a step whatever goroutine makes it.
	crashOn func(op, name string) bool
}

type step struct {
	n    int // MutationCount after the call
	op   string
	name string // base name of the file
}

func (f *traceFS) note(op, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.steps = append(f.steps, step{n: f.MemFS.MutationCount(), op: op, name: filepath.Base(name)})
	if f.crashOn != nil && f.crashOn(op, filepath.Base(name)) {
		f.crashOn = nil
		f.MemFS.Crash(vfs.DropUnsynced)
	}
}

func (f *traceFS) find(op, suffix string) []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ns []int
	for _, s := range f.steps {
		if s.op == op && (suffix == "" || filepath.Ext(s.name) == suffix) {
			ns = append(ns, s.n)
		}
	}
	return ns
}

func (f *traceFS) wrap(name string, file vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &traceFile{File: file, fs: f, name: name}, nil
}

func (f *traceFS) Create(name string) (vfs.File, error) {
	file, err := f.MemFS.Create(name)
	if err == nil {
		f.note("create", name)
	}
	return f.wrap(name, file, err)
}

func (f *traceFS) OpenReadWrite(name string) (vfs.File, error) {
	file, err := f.MemFS.OpenReadWrite(name)
	return f.wrap(name, file, err)
}

func (f *traceFS) Rename(a, b string) error {
	err := f.MemFS.Rename(a, b)
	if err == nil {
		f.note("rename", b)
	}
	return err
}

func (f *traceFS) SyncDir(dir string) error {
	err := f.MemFS.SyncDir(dir)
	if err == nil {
		f.note("syncdir", dir)
	}
	return err
}

type traceFile struct {
	vfs.File
	fs   *traceFS
	name string
}

func (t *traceFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := t.File.WriteAt(p, off)
	if err == nil {
		t.fs.note("write", t.name)
	}
	return n, err
}

func (t *traceFile) WriteAtSync(p []byte, off int64) (int, error) {
	n, err := t.File.WriteAtSync(p, off)
	if err == nil {
		t.fs.note("writesync", t.name)
	}
	return n, err
}

func (t *traceFile) Sync() error {
	err := t.File.Sync()
	if err == nil {
		t.fs.note("sync", t.name)
	}
	return err
}

func (t *traceFile) Truncate(size int64) error {
	err := t.File.Truncate(size)
	if err == nil {
		t.fs.note("truncate", t.name)
	}
	return err
}

func (t *traceFile) Preallocate(off, n int64) error {
	err := t.File.Preallocate(off, n)
	if err == nil {
		t.fs.note("preallocate", t.name)
	}
	return err
}
