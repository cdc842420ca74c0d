package vfs

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
)

// ReadFile reads a whole file.
func ReadFile(fs FS, path string) ([]byte, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b, nil
}

// WriteFileAtomic replaces dir/name with b so that a crash leaves the old
// content or the new, never a mix: a temporary file is written and synced,
// renamed over the old one, and the directory synced.
func WriteFileAtomic(fs FS, dir, name string, b []byte) error {
	tmp := filepath.Join(dir, name+".tmp")
	_ = fs.Remove(tmp)
	f, err := fs.Create(tmp)
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	_, err = f.WriteAtSync(b, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fs.Rename(tmp, filepath.Join(dir, name))
	}
	if err == nil {
		err = fs.SyncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

// RemoveAll removes dir and everything under it, then syncs dir's parent so
// the removal survives a crash. A dir that does not exist is not an error.
func RemoveAll(fs FS, dir string) error {
	if err := removeTree(fs, dir); err != nil {
		return err
	}
	return fs.SyncDir(filepath.Dir(dir))
}

func removeTree(fs FS, dir string) error {
	names, err := fs.List(dir)
	if errors.Is(err, ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, n := range names {
		p := filepath.Join(dir, n)
		if err := fs.Remove(p); err != nil {
			if err := removeTree(fs, p); err != nil {
				return err
			}
		}
	}
	return fs.RemoveDir(dir)
}
