package volatile

import (
	"io"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/felixbroker/felix/segment/vfs"
)

// node is a file's bytes, shared by every handle open on it.
type node struct {
	mu   sync.RWMutex
	data []byte
}

func (n *node) size() int64 {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return int64(len(n.data))
}

// file is an open handle.
type file struct {
	node     *node
	name     string
	writable bool
	closed   atomic.Bool
}

func (f *file) Name() string { return f.name }

func (f *file) usable(op string, write bool) error {
	switch {
	case f.closed.Load():
		return pathErr(op, f.name, vfs.ErrClosed)
	case write && !f.writable:
		return pathErr(op, f.name, syscall.EBADF)
	}
	return nil
}

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	if err := f.usable("read", false); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("read", f.name, syscall.EINVAL)
	}
	f.node.mu.RLock()
	defer f.node.mu.RUnlock()
	if off >= int64(len(f.node.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.node.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *file) WriteAt(p []byte, off int64) (int, error) {
	if err := f.usable("write", true); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("write", f.name, syscall.EINVAL)
	}
	n := f.node
	n.mu.Lock()
	defer n.mu.Unlock()
	end := off + int64(len(p))
	if end > int64(len(n.data)) {
		n.data = grow(n.data, end)
	}
	copy(n.data[off:], p)
	return len(p), nil
}

// grow extends data to size bytes, zero-filled, doubling the capacity so a
// file written at its end is copied O(log n) times.
func grow(data []byte, size int64) []byte {
	if size <= int64(cap(data)) {
		old := len(data)
		data = data[:size]
		clear(data[old:])
		return data
	}
	out := make([]byte, size, max(size, 2*int64(cap(data))))
	copy(out, data)
	return out
}

// Sync does nothing: there is no durable copy to bring up to date.
func (f *file) Sync() error { return f.usable("sync", false) }

func (f *file) WriteAtSync(p []byte, off int64) (int, error) { return f.WriteAt(p, off) }

func (f *file) Truncate(size int64) error {
	if err := f.usable("truncate", true); err != nil {
		return err
	}
	if size < 0 {
		return pathErr("truncate", f.name, syscall.EINVAL)
	}
	n := f.node
	n.mu.Lock()
	defer n.mu.Unlock()
	if size > int64(len(n.data)) {
		n.data = grow(n.data, size)
		return nil
	}
	if size < int64(cap(n.data))/4 {
		n.data = append([]byte(nil), n.data[:size]...) // give the memory back
		return nil
	}
	n.data = n.data[:size]
	return nil
}

// Preallocate reserves nothing: memory is taken as the file grows.
func (f *file) Preallocate(off, length int64) error { return f.usable("preallocate", true) }

func (f *file) Size() (int64, error) {
	if err := f.usable("size", false); err != nil {
		return 0, err
	}
	return f.node.size(), nil
}

func (f *file) Close() error {
	if f.closed.Swap(true) {
		return pathErr("close", f.name, vfs.ErrClosed)
	}
	return nil
}
