//go:build windows

package vfs

import (
	"io/fs"
	"os"
	"syscall"
)

// removeFile deletes name; unlike os.Remove it never removes a directory.
func removeFile(name string) error {
	p, err := syscall.UTF16PtrFromString(name)
	if err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	if err := syscall.DeleteFile(p); err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	return nil
}

// syncDir is a no-op on Windows, which has no way to flush a directory
// (NTFS journals its metadata); it only checks that dir is a directory.
func syncDir(dir string) error {
	info, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return &fs.PathError{Op: "sync", Path: dir, Err: syscall.ENOTDIR}
	}
	return nil
}

func removeDir(name string) error {
	p, err := syscall.UTF16PtrFromString(name)
	if err != nil {
		return &fs.PathError{Op: "rmdir", Path: name, Err: err}
	}
	if err := syscall.RemoveDirectory(p); err != nil {
		return &fs.PathError{Op: "rmdir", Path: name, Err: err}
	}
	return nil
}
