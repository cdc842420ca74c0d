//go:build unix

package vfs

import (
	"io/fs"
	"os"
	"syscall"
)

// removeFile unlinks name; unlike os.Remove it never removes a directory.
func removeFile(name string) error {
	for {
		err := syscall.Unlink(name)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "remove", Path: name, Err: err}
		}
		return nil
	}
}

// syncDir opens dir as a directory and fsyncs it, which makes its entries
// durable.
func syncDir(dir string) error {
	d, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

func removeDir(name string) error {
	for {
		err := syscall.Rmdir(name)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "rmdir", Path: name, Err: err}
		}
		return nil
	}
}
