package vfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/felixbroker/felix/ring"
)

// filePerm is the mode of every file and directory the OS FS creates,
// before the umask.
const (
	filePerm = 0o644
	dirPerm  = 0o755
)

// osFS is the real file system: data through a ring.Driver, metadata
// through plain system calls.
type osFS struct {
	d ring.Driver
}

// NewOS returns the FS of the operating system. Reads, writes and syncs of
// its files go through d, which must outlive every file opened here;
// creating, opening, renaming, removing, listing and syncing directories
// are plain system calls on the calling goroutine.
func NewOS(d ring.Driver) FS {
	return &osFS{d: d}
}

func (o *osFS) Create(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, filePerm)
	if err != nil {
		return nil, err
	}
	return newOSFile(f, name, o.d), nil
}

func (o *osFS) OpenReadWrite(name string) (File, error) {
	return o.open(name, os.O_RDWR)
}

func (o *osFS) Open(name string) (File, error) {
	return o.open(name, os.O_RDONLY)
}

// open opens an existing file. A directory is refused with EISDIR, as
// opening it for writing would be: a File is always a regular file.
func (o *osFS) open(name string, flag int) (File, error) {
	f, err := os.OpenFile(name, flag, 0)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err == nil && info.IsDir() {
		err = &fs.PathError{Op: "open", Path: name, Err: syscall.EISDIR}
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return newOSFile(f, name, o.d), nil
}

func (o *osFS) Remove(name string) error { return removeFile(name) }

func (o *osFS) RemoveDir(dir string) error { return removeDir(dir) }

func (o *osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }

// MkdirAll creates dir and every missing parent, top down, and syncs each
// directory it added an entry to, so the new path survives a crash.
func (o *osFS) MkdirAll(dir string) error {
	missing, err := missingDirs(filepath.Clean(dir))
	if err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := o.mkdirSynced(missing[i]); err != nil {
			return err
		}
	}
	return nil
}

// missingDirs returns dir and its ancestors that do not exist yet, deepest
// first. It fails when a path component exists and is not a directory.
func missingDirs(dir string) ([]string, error) {
	var missing []string
	for {
		info, err := os.Stat(dir)
		if err == nil {
			if !info.IsDir() {
				return nil, &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
			}
			return missing, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		missing = append(missing, dir)
		parent := filepath.Dir(dir)
		if parent == dir {
			return missing, nil
		}
		dir = parent
	}
}

// mkdirSynced makes one directory and syncs its parent. A directory made
// meanwhile by someone else is accepted, and its parent synced all the same.
func (o *osFS) mkdirSynced(dir string) error {
	err := os.Mkdir(dir, dirPerm)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return o.SyncDir(filepath.Dir(dir))
}

func (o *osFS) List(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}

func (o *osFS) SyncDir(dir string) error { return syncDir(dir) }

func (o *osFS) Stat(name string) (int64, error) {
	info, err := os.Stat(name)
	if err != nil {
		return 0, err
	}
	return info.Size(), nil
}
