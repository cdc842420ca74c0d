package vfs

import (
	"io/fs"
	"os"
	"slices"
	"sync"
	"syscall"
)

// MemFS is an FS held in memory that can simulate a machine crash: it
// keeps, beside the current state every call sees, the durable state the
// rules of FS promise, and a crash keeps only the latter (see doc.go). It
// is safe for concurrent use; one lock guards all of it.
type MemFS struct {
	mu   sync.Mutex
	root *memNode

	unsynced map[*memNode]struct{} // files whose last is set
	writeSeq uint64                // numbers every WriteAt

	mutations int       // successful mutating calls so far
	crashAt   int       // crash when mutations reaches it; 0 when unarmed
	crashMode CrashMode // the crash crashAt asks for
	image     *MemFS    // what the crash left; nil until it happened
}

// NewMem returns an empty MemFS: only the root directory exists, durably.
func NewMem() *MemFS {
	return &MemFS{root: newMemDir(), unsynced: map[*memNode]struct{}{}}
}

// live fails once the FS has crashed. The caller holds m.mu.
func (m *MemFS) live(op, name string) error {
	if m.image != nil {
		return &fs.PathError{Op: op, Path: name, Err: ErrCrashed}
	}
	return nil
}

// mutated counts one successful mutating call, and crashes the FS when it
// is the one SetCrashAfter named. The caller holds m.mu.
func (m *MemFS) mutated() {
	m.mutations++
	if m.crashAt != 0 && m.mutations == m.crashAt {
		m.image = m.capture(m.crashMode)
	}
}

// Create makes a new, empty file. Its entry is durable only once its
// directory is synced. Counts as a mutation.
func (m *MemFS) Create(name string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.live("create", name); err != nil {
		return nil, err
	}
	dir, base, err := m.parentOf("create", name)
	if err != nil {
		return nil, err
	}
	if dir.children[base] != nil {
		return nil, &fs.PathError{Op: "create", Path: name, Err: ErrExist}
	}
	n := newMemFile()
	dir.children[base] = n
	m.mutated()
	return &memFile{fs: m, node: n, name: name, writable: true}, nil
}

// OpenReadWrite opens an existing file for reading and writing.
func (m *MemFS) OpenReadWrite(name string) (File, error) { return m.open("open", name, true) }

// Open opens an existing file for reading only.
func (m *MemFS) Open(name string) (File, error) { return m.open("open", name, false) }

func (m *MemFS) open(op, name string, writable bool) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.live(op, name); err != nil {
		return nil, err
	}
	n, err := m.walkFile(op, name)
	if err != nil {
		return nil, err
	}
	return &memFile{fs: m, node: n, name: name, writable: writable}, nil
}

// Remove deletes a file's entry; open files keep working. The removal is
// durable only once the directory is synced. Counts as a mutation.
func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.live("remove", name); err != nil {
		return err
	}
	dir, base, err := m.parentOf("remove", name)
	if err != nil {
		return err
	}
	switch n := dir.children[base]; {
	case n == nil:
		return &fs.PathError{Op: "remove", Path: name, Err: ErrNotExist}
	case n.dir:
		return &fs.PathError{Op: "remove", Path: name, Err: syscall.EISDIR}
	}
	delete(dir.children, base)
	m.mutated()
	return nil
}

// RemoveDir deletes an empty directory; like a file's removal, it survives
// a crash once its parent is synced.
func (m *MemFS) RemoveDir(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.live("rmdir", name); err != nil {
		return err
	}
	dir, base, err := m.parentOf("rmdir", name)
	if err != nil {
		return err
	}
	switch n := dir.children[base]; {
	case n == nil:
		return &fs.PathError{Op: "rmdir", Path: name, Err: ErrNotExist}
	case !n.dir:
		return &fs.PathError{Op: "rmdir", Path: name, Err: syscall.ENOTDIR}
	case len(n.children) > 0:
		return &fs.PathError{Op: "rmdir", Path: name, Err: syscall.ENOTEMPTY}
	}
	delete(dir.children, base)
	m.mutated()
	return nil
}

// Rename moves oldname's entry to newname, replacing what was there, with
// the checks rename(2) makes. Each directory's change is durable only once
// that directory is synced. Counts as a mutation.
func (m *MemFS) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.live("rename", oldname); err != nil {
		return err
	}
	odir, obase, err := m.parentOf("rename", oldname)
	if err != nil {
		return err
	}
	ndir, nbase, err := m.parentOf("rename", newname)
	if err != nil {
		return err
	}
	n := odir.children[obase]
	if n == nil {
		return &fs.PathError{Op: "rename", Path: oldname, Err: ErrNotExist}
	}
	if errno := renameCheck(n, ndir, ndir.children[nbase]); errno != 0 {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: errno}
	}
	delete(odir.children, obase)
	ndir.children[nbase] = n
	m.mutated()
	return nil
}

// renameCheck returns the errno rename(2) gives for moving n into ndir in
// place of target (nil when the name is free), or 0.
func renameCheck(n, ndir, target *memNode) syscall.Errno {
	switch {
	case target == n:
		return 0
	case n.dir && n.contains(ndir):
		return syscall.EINVAL
	case target == nil:
		return 0
	case target.dir && !n.dir:
		return syscall.EISDIR
	case !target.dir && n.dir:
		return syscall.ENOTDIR
	case target.dir && len(target.children) > 0:
		return syscall.ENOTEMPTY
	}
	return 0
}

// MkdirAll creates dir and its missing parents, and makes each entry it
// added durable, as the OS FS does by syncing each parent. One successful
// call counts as one mutation, whether it created anything or not.
func (m *MemFS) MkdirAll(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.live("mkdir", dir); err != nil {
		return err
	}
	n := m.root
	for _, part := range splitPath(dir) {
		child := n.children[part]
		switch {
		case child == nil:
			child = newMemDir()
			n.children[part] = child
			n.syncEntries()
		case !child.dir:
			return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
		}
		n = child
	}
	m.mutated()
	return nil
}

// List returns the sorted names of dir's current entries.
func (m *MemFS) List(dir string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.live("readdir", dir); err != nil {
		return nil, err
	}
	n, err := m.walkDir("readdir", dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(n.children))
	for name := range n.children {
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}

// SyncDir makes dir's current entries its durable ones. Counts as a
// mutation.
func (m *MemFS) SyncDir(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.live("sync", dir); err != nil {
		return err
	}
	n, err := m.walkDir("sync", dir)
	if err != nil {
		return err
	}
	n.syncEntries()
	m.mutated()
	return nil
}

// Stat returns the current size of a file; a directory's size is 0.
func (m *MemFS) Stat(name string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.live("stat", name); err != nil {
		return 0, err
	}
	n, err := m.walk("stat", name)
	if err != nil {
		return 0, err
	}
	return int64(len(n.data)), nil
}
