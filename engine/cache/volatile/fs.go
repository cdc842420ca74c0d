package volatile

import (
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/felixbroker/felix/segment/vfs"
)

// FS is a vfs.FS in memory. The zero value is not usable; call New.
type FS struct {
	mu    sync.RWMutex
	files map[string]*node
	dirs  map[string]bool
}

var _ vfs.FS = (*FS)(nil)

// New returns an empty FS holding only the root directory.
func New() *FS { return &FS{files: map[string]*node{}, dirs: map[string]bool{"/": true}} }

// clean turns a name into the FS's key: slash-separated, absolute.
func clean(name string) string { return path.Clean("/" + filepath.ToSlash(name)) }

func pathErr(op, name string, err error) error { return &fs.PathError{Op: op, Path: name, Err: err} }

func (f *FS) Create(name string) (vfs.File, error) {
	p := clean(name)
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.files[p] != nil || f.dirs[p]:
		return nil, pathErr("create", name, vfs.ErrExist)
	case !f.dirs[path.Dir(p)]:
		return nil, pathErr("create", name, vfs.ErrNotExist)
	}
	n := &node{}
	f.files[p] = n
	return &file{node: n, name: name, writable: true}, nil
}

func (f *FS) OpenReadWrite(name string) (vfs.File, error) { return f.open("open", name, true) }

func (f *FS) Open(name string) (vfs.File, error) { return f.open("open", name, false) }

func (f *FS) open(op, name string, writable bool) (vfs.File, error) {
	p := clean(name)
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.dirs[p] {
		return nil, pathErr(op, name, syscall.EISDIR)
	}
	n := f.files[p]
	if n == nil {
		return nil, pathErr(op, name, vfs.ErrNotExist)
	}
	return &file{node: n, name: name, writable: writable}, nil
}

func (f *FS) Remove(name string) error {
	p := clean(name)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dirs[p] {
		return pathErr("remove", name, syscall.EISDIR)
	}
	if f.files[p] == nil {
		return pathErr("remove", name, vfs.ErrNotExist)
	}
	delete(f.files, p)
	return nil
}

// RemoveDir deletes an empty directory.
func (f *FS) RemoveDir(dir string) error {
	p := clean(dir)
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.dirs[p] {
		if f.files[p] != nil {
			return pathErr("rmdir", dir, syscall.ENOTDIR)
		}
		return pathErr("rmdir", dir, vfs.ErrNotExist)
	}
	prefix := strings.TrimSuffix(p, "/") + "/"
	for q := range f.files {
		if strings.HasPrefix(q, prefix) {
			return pathErr("rmdir", dir, syscall.ENOTEMPTY)
		}
	}
	for q := range f.dirs {
		if strings.HasPrefix(q, prefix) {
			return pathErr("rmdir", dir, syscall.ENOTEMPTY)
		}
	}
	delete(f.dirs, p)
	return nil
}

func (f *FS) Rename(oldname, newname string) error {
	from, to := clean(oldname), clean(newname)
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.files[from]
	switch {
	case n == nil:
		return pathErr("rename", oldname, vfs.ErrNotExist)
	case f.dirs[to]:
		return pathErr("rename", newname, syscall.EISDIR)
	case !f.dirs[path.Dir(to)]:
		return pathErr("rename", newname, vfs.ErrNotExist)
	}
	delete(f.files, from)
	f.files[to] = n
	return nil
}

func (f *FS) MkdirAll(dir string) error {
	p := clean(dir)
	f.mu.Lock()
	defer f.mu.Unlock()
	for q := p; !f.dirs[q]; q = path.Dir(q) {
		if f.files[q] != nil {
			return pathErr("mkdir", dir, syscall.ENOTDIR)
		}
	}
	for q := p; !f.dirs[q]; q = path.Dir(q) {
		f.dirs[q] = true
	}
	return nil
}

func (f *FS) List(dir string) ([]string, error) {
	p := clean(dir)
	f.mu.RLock()
	defer f.mu.RUnlock()
	if !f.dirs[p] {
		return nil, pathErr("list", dir, vfs.ErrNotExist)
	}
	prefix := strings.TrimSuffix(p, "/") + "/"
	var out []string
	add := func(q string) {
		if rest, ok := strings.CutPrefix(q, prefix); ok && rest != "" && !strings.Contains(rest, "/") {
			out = append(out, rest)
		}
	}
	for q := range f.files {
		add(q)
	}
	for q := range f.dirs {
		add(q)
	}
	sort.Strings(out)
	return out, nil
}

// SyncDir does nothing: nothing here outlives the process.
func (f *FS) SyncDir(dir string) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if !f.dirs[clean(dir)] {
		return pathErr("syncdir", dir, vfs.ErrNotExist)
	}
	return nil
}

func (f *FS) Stat(name string) (int64, error) {
	f.mu.RLock()
	n := f.files[clean(name)]
	f.mu.RUnlock()
	if n == nil {
		return 0, pathErr("stat", name, vfs.ErrNotExist)
	}
	return n.size(), nil
}

// Bytes is the total size of every file, for memory accounting.
func (f *FS) Bytes() int64 {
	f.mu.RLock()
	defer f.mu.RUnlock()
	var total int64
	for _, n := range f.files {
		total += n.size()
	}
	return total
}
