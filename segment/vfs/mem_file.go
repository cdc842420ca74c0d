package vfs

import (
	"io"
	"io/fs"
	"syscall"
)

// memFile is an open file of a MemFS. Every call takes the MemFS lock.
type memFile struct {
	fs       *MemFS
	node     *memNode
	name     string
	writable bool
	closed   bool // guarded by fs.mu
}

func (f *memFile) Name() string { return f.name }

func (f *memFile) pathErr(op string, err error) error {
	return &fs.PathError{Op: op, Path: f.name, Err: err}
}

// usable fails once the FS crashed, the file is closed, or (for a write)
// the file is read-only. The caller holds f.fs.mu.
func (f *memFile) usable(op string, write bool) error {
	switch {
	case f.fs.image != nil:
		return f.pathErr(op, ErrCrashed)
	case f.closed:
		return f.pathErr(op, ErrClosed)
	case write && !f.writable:
		return f.pathErr(op, syscall.EBADF)
	}
	return nil
}

// ReadAt reads the current bytes.
func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usable("read", false); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, f.pathErr("read", syscall.EINVAL)
	}
	if off >= int64(len(f.node.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.node.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// WriteAt writes p at off; the bytes are durable only after a Sync. One
// call counts as one mutation.
func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usable("write", true); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, f.pathErr("write", syscall.EINVAL)
	}
	f.write(p, off)
	f.fs.mutated()
	return len(p), nil
}

// write writes p at off and remembers it as the file's last unsynced
// write. The caller holds f.fs.mu.
func (f *memFile) write(p []byte, off int64) {
	f.node.writeData(p, off)
	f.fs.writeSeq++
	f.node.last = &memWrite{seq: f.fs.writeSeq, off: off, data: append([]byte(nil), p...)}
	f.fs.unsynced[f.node] = struct{}{}
}

// WriteAtSync is WriteAt then Sync, and counts as two mutations, so a
// crash can fall between the write and the sync: then it returns
// len(p) and ErrCrashed.
func (f *memFile) WriteAtSync(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usable("write", true); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, f.pathErr("write", syscall.EINVAL)
	}
	f.write(p, off)
	f.fs.mutated()
	if err := f.usable("sync", false); err != nil {
		return len(p), err
	}
	f.sync()
	f.fs.mutated()
	return len(p), nil
}

// Sync makes the current bytes, and size, durable. Counts as a mutation.
func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usable("sync", false); err != nil {
		return err
	}
	f.sync()
	f.fs.mutated()
	return nil
}

func (f *memFile) sync() {
	f.node.syncData()
	delete(f.fs.unsynced, f.node)
}

// Truncate sets the current size; the new size is durable only after a
// Sync. Counts as a mutation.
func (f *memFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usable("truncate", true); err != nil {
		return err
	}
	if size < 0 {
		return f.pathErr("truncate", syscall.EINVAL)
	}
	f.node.resize(size)
	f.fs.mutated()
	return nil
}

// Preallocate changes neither the contents nor the size (KEEP_SIZE), so a
// MemFS only checks its arguments. Counts as a mutation.
func (f *memFile) Preallocate(off, length int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usable("preallocate", true); err != nil {
		return err
	}
	if off < 0 || length < 0 {
		return f.pathErr("preallocate", syscall.EINVAL)
	}
	f.fs.mutated()
	return nil
}

// Size returns the current size.
func (f *memFile) Size() (int64, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usable("stat", false); err != nil {
		return 0, err
	}
	return int64(len(f.node.data)), nil
}

// Close closes the file; it syncs nothing.
func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.usable("close", false); err != nil {
		return err
	}
	f.closed = true
	return nil
}
