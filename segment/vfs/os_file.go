package vfs

import (
	"io"
	"io/fs"
	"os"
	"runtime"
	"syscall"

	"github.com/felixbroker/felix/ring"
)

// osFile is an open file of the OS FS. Its data operations go through the
// driver: through its own waiting path when it has one (ring.Blocking),
// else as Submits waited for here. Its metadata operations are plain
// system calls on f.
type osFile struct {
	f      *os.File // kept so its finalizer cannot close fd under us
	fd     int
	name   string
	d      ring.Driver
	b      ring.Blocking // d, when it has a waiting path; else nil
	closed bool          // Close is never concurrent with another call
}

func newOSFile(f *os.File, name string, d ring.Driver) *osFile {
	b, _ := d.(ring.Blocking)
	return &osFile{f: f, fd: int(f.Fd()), name: name, d: d, b: b}
}

func (f *osFile) Name() string { return f.name }

func (f *osFile) pathErr(op string, err error) error {
	return &fs.PathError{Op: op, Path: f.name, Err: err}
}

// wrap is pathErr, and nil for nil.
func (f *osFile) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return f.pathErr(op, err)
}

// finish ends a data call: it returns w to the pool, and keeps f (so its
// os.File, whose finalizer would close fd) reachable until the driver is
// done with fd.
func (f *osFile) finish(w *waiter) {
	w.release()
	runtime.KeepAlive(f)
}

// ReadAt reads len(p) bytes at off, in as many reads as it takes. It
// returns io.EOF when the file ends first.
func (f *osFile) ReadAt(p []byte, off int64) (int, error) {
	if f.closed {
		return 0, f.pathErr("read", ErrClosed)
	}
	if f.b != nil {
		n, err := f.b.ReadAt(f.fd, p, off)
		runtime.KeepAlive(f)
		if err != nil && err != io.EOF {
			err = f.pathErr("read", err)
		}
		return n, err
	}
	w := getWaiter()
	defer f.finish(w)
	n := 0
	for n < len(p) {
		chunk := p[n:min(len(p), n+ioBytesMax)]
		res, err := w.do1(f.d, ring.OpRead, f.fd, chunk, off+int64(n))
		if err != nil {
			return n, f.pathErr("read", err)
		}
		if res == 0 {
			return n, io.EOF
		}
		n += res
	}
	return n, nil
}

// WriteAt writes all of p at off, looping over short writes.
func (f *osFile) WriteAt(p []byte, off int64) (int, error) {
	if f.closed {
		return 0, f.pathErr("write", ErrClosed)
	}
	if f.b != nil {
		n, err := f.b.WriteAt(f.fd, p, off)
		runtime.KeepAlive(f)
		return n, f.wrap("write", err)
	}
	w := getWaiter()
	defer f.finish(w)
	return f.writeAll(w, p, off)
}

func (f *osFile) writeAll(w *waiter, p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		chunk := p[n:min(len(p), n+ioBytesMax)]
		res, err := w.do1(f.d, ring.OpWrite, f.fd, chunk, off+int64(n))
		if err != nil {
			return n, f.pathErr("write", err)
		}
		if res == 0 {
			return n, f.pathErr("write", io.ErrShortWrite)
		}
		n += res
	}
	return n, nil
}

// Sync makes the file's data durable with one fdatasync.
func (f *osFile) Sync() error {
	if f.closed {
		return f.pathErr("sync", ErrClosed)
	}
	if f.b != nil {
		err := f.b.Fdatasync(f.fd)
		runtime.KeepAlive(f)
		return f.wrap("sync", err)
	}
	w := getWaiter()
	defer f.finish(w)
	return f.sync(w)
}

func (f *osFile) sync(w *waiter) error {
	if _, err := w.do1(f.d, ring.OpFdatasync, f.fd, nil, 0); err != nil {
		return f.pathErr("sync", err)
	}
	return nil
}

// WriteAtSync hands the whole job to a driver with a waiting path.
// Otherwise it submits a write linked to an fdatasync, once. A short write
// cancels the linked sync; the rest is then written and synced on its own.
// An empty p is a lone sync, and a p over ioBytesMax is written in pieces
// and then synced.
func (f *osFile) WriteAtSync(p []byte, off int64) (int, error) {
	if f.closed {
		return 0, f.pathErr("write", ErrClosed)
	}
	if f.b != nil {
		n, err := f.b.WriteAtSync(f.fd, p, off)
		runtime.KeepAlive(f)
		if n < len(p) {
			return n, f.wrap("write", err)
		}
		return n, f.wrap("sync", err)
	}
	w := getWaiter()
	defer f.finish(w)
	if len(p) == 0 || len(p) > ioBytesMax {
		return f.writeThenSync(w, p, off, 0)
	}
	w.set(0, ring.OpWrite, f.fd, p, off, true)
	w.set(1, ring.OpFdatasync, f.fd, nil, 0, false)
	if err := w.run(f.d, 2); err != nil {
		return 0, f.pathErr("write", err)
	}
	write, sync := &w.cs[0], &w.cs[1]
	if err := write.Err(); err != nil {
		return 0, f.pathErr("write", err)
	}
	if int(write.Res) < len(p) {
		return f.writeThenSync(w, p, off, int(write.Res))
	}
	if err := sync.Err(); err != nil {
		return len(p), f.pathErr("sync", err)
	}
	return len(p), nil
}

// writeThenSync writes p[done:] at off+done and then syncs, as two
// submissions.
func (f *osFile) writeThenSync(w *waiter, p []byte, off int64, done int) (int, error) {
	n, err := f.writeAll(w, p[done:], off+int64(done))
	n += done
	if err != nil {
		return n, err
	}
	return n, f.sync(w)
}

func (f *osFile) Truncate(size int64) error {
	if f.closed {
		return f.pathErr("truncate", ErrClosed)
	}
	return f.f.Truncate(size)
}

func (f *osFile) Preallocate(off, length int64) error {
	if f.closed {
		return f.pathErr("preallocate", ErrClosed)
	}
	if off < 0 || length < 0 {
		return f.pathErr("preallocate", syscall.EINVAL)
	}
	if length == 0 {
		return nil
	}
	if err := preallocate(f.fd, off, length); err != nil {
		return f.pathErr("preallocate", err)
	}
	return nil
}

func (f *osFile) Size() (int64, error) {
	if f.closed {
		return 0, f.pathErr("stat", ErrClosed)
	}
	info, err := f.f.Stat()
	if err != nil {
		return 0, err
	}
	return info.Size(), nil
}

// Close closes the file. The caller has waited for its every call, so no
// driver operation names the descriptor any more.
func (f *osFile) Close() error {
	if f.closed {
		return f.pathErr("close", ErrClosed)
	}
	f.closed = true
	return f.f.Close()
}
