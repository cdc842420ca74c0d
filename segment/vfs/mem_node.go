package vfs

import (
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// memNode is an inode of a MemFS: a file or a directory. Each keeps its
// current state, which operations see, and its durable state, which is all
// a crash leaves. Every field is guarded by the MemFS lock.
type memNode struct {
	dir bool

	// A file: its bytes, the bytes as of its last sync, and its most
	// recent write since that sync (nil when there is none).
	data    []byte
	durable []byte
	last    *memWrite

	// A directory: its entries, and its entries as of its last SyncDir.
	children        map[string]*memNode
	durableChildren map[string]*memNode
}

// memWrite is one WriteAt, kept so a crash can tear it.
type memWrite struct {
	seq  uint64 // orders writes across the whole MemFS
	off  int64
	data []byte // a copy of what was written
}

func newMemDir() *memNode {
	return &memNode{dir: true, children: map[string]*memNode{}, durableChildren: map[string]*memNode{}}
}

func newMemFile() *memNode { return &memNode{} }

// syncEntries makes the current entries of a directory durable.
func (n *memNode) syncEntries() { n.durableChildren = maps.Clone(n.children) }

// syncData makes the current bytes of a file durable.
func (n *memNode) syncData() {
	n.durable = append(n.durable[:0:0], n.data...)
	n.last = nil
}

// writeData writes p at off, growing the file with zeros as needed.
func (n *memNode) writeData(p []byte, off int64) {
	n.resize(max(int64(len(n.data)), off+int64(len(p))))
	copy(n.data[off:], p)
}

// resize sets the current size, zero-filling any growth.
func (n *memNode) resize(size int64) {
	if size <= int64(len(n.data)) {
		n.data = n.data[:size]
		return
	}
	n.data = append(n.data, make([]byte, size-int64(len(n.data)))...)
}

// contains reports whether target is n or lies below n in the current tree.
func (n *memNode) contains(target *memNode) bool {
	if n == target {
		return true
	}
	for _, c := range n.children {
		if c.dir && c.contains(target) {
			return true
		}
	}
	return false
}

// splitPath turns a name into its components below the root. Relative and
// absolute names are the same name: "a/b" is "/a/b".
func splitPath(name string) []string {
	clean := path.Clean("/" + filepath.ToSlash(name))
	if clean == "/" {
		return nil
	}
	return strings.Split(clean[1:], "/")
}

// walk returns the node a name leads to in the current tree.
func (m *MemFS) walk(op, name string) (*memNode, error) {
	n := m.root
	for _, part := range splitPath(name) {
		if !n.dir {
			return nil, &fs.PathError{Op: op, Path: name, Err: syscall.ENOTDIR}
		}
		if n = n.children[part]; n == nil {
			return nil, &fs.PathError{Op: op, Path: name, Err: ErrNotExist}
		}
	}
	return n, nil
}

// walkDir is walk for a name that must be a directory.
func (m *MemFS) walkDir(op, name string) (*memNode, error) {
	n, err := m.walk(op, name)
	if err == nil && !n.dir {
		err = &fs.PathError{Op: op, Path: name, Err: syscall.ENOTDIR}
	}
	return n, err
}

// walkFile is walk for a name that must be a file.
func (m *MemFS) walkFile(op, name string) (*memNode, error) {
	n, err := m.walk(op, name)
	if err == nil && n.dir {
		err = &fs.PathError{Op: op, Path: name, Err: syscall.EISDIR}
	}
	return n, err
}

// parentOf returns the directory that holds name's entry, and the entry's
// name. The root has no parent.
func (m *MemFS) parentOf(op, name string) (*memNode, string, error) {
	parts := splitPath(name)
	if len(parts) == 0 {
		return nil, "", &fs.PathError{Op: op, Path: name, Err: syscall.EINVAL}
	}
	dir, err := m.walkDir(op, path.Join(parts[:len(parts)-1]...))
	if err != nil {
		return nil, "", &fs.PathError{Op: op, Path: name, Err: underlying(err)}
	}
	return dir, parts[len(parts)-1], nil
}

// underlying strips a PathError so it can be re-labelled with another path.
func underlying(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}
