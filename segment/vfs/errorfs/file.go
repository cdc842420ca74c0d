package errorfs

import "github.com/felixbroker/felix/segment/vfs"

// file is a vfs.File whose calls the rules of its FS can fail.
type file struct {
	fs    *FS
	inner vfs.File
}

func (f *file) Name() string { return f.inner.Name() }

func (f *file) Close() error { return f.inner.Close() }

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	if r := f.fs.check(Read, f.Name(), ""); r != nil {
		return 0, fail(r, Read, f.Name())
	}
	return f.inner.ReadAt(p, off)
}

func (f *file) WriteAt(p []byte, off int64) (int, error) {
	if r := f.fs.check(Write, f.Name(), ""); r != nil {
		return f.failWrite(r, Write, p, off)
	}
	return f.inner.WriteAt(p, off)
}

func (f *file) WriteAtSync(p []byte, off int64) (int, error) {
	if r := f.fs.check(WriteSync, f.Name(), ""); r != nil {
		return f.failWrite(r, WriteSync, p, off)
	}
	return f.inner.WriteAtSync(p, off)
}

// failWrite writes the part of p a short write leaves, unsynced (a short
// write cancels the sync linked to it), then returns r's error.
func (f *file) failWrite(r *Rule, op OpKind, p []byte, off int64) (int, error) {
	n := 0
	if r.ShortBy > 0 && r.ShortBy < len(p) {
		var err error
		if n, err = f.inner.WriteAt(p[:len(p)-r.ShortBy], off); err != nil {
			return n, err
		}
	}
	return n, fail(r, op, f.Name())
}

func (f *file) Sync() error {
	if r := f.fs.check(Sync, f.Name(), ""); r != nil {
		return fail(r, Sync, f.Name())
	}
	return f.inner.Sync()
}

func (f *file) Truncate(size int64) error {
	if r := f.fs.check(Truncate, f.Name(), ""); r != nil {
		return fail(r, Truncate, f.Name())
	}
	return f.inner.Truncate(size)
}

func (f *file) Preallocate(off, length int64) error {
	if r := f.fs.check(Preallocate, f.Name(), ""); r != nil {
		return fail(r, Preallocate, f.Name())
	}
	return f.inner.Preallocate(off, length)
}

func (f *file) Size() (int64, error) {
	if r := f.fs.check(Stat, f.Name(), ""); r != nil {
		return 0, fail(r, Stat, f.Name())
	}
	return f.inner.Size()
}
