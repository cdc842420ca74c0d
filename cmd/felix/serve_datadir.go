package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// dataDirProbe is the file checkDataDir writes and removes.
const dataDirProbe = ".felix-write-probe"

// readOnlyDataError is a data directory felix serve cannot write: it keeps
// its lock, catalog, logs and cluster state there, so it says so before
// anything else trips over it with an error about one of those files (a
// lock, "recovery.point: file exists").
type readOnlyDataError struct {
	dir      string
	parent   string // when dir does not exist: the directory it could not be made in
	readOnly bool   // the file system is mounted read-only; otherwise permissions
	err      error
}

func (e *readOnlyDataError) Error() string {
	what := "the data directory " + e.dir
	if e.parent != "" {
		what = fmt.Sprintf("the data directory %s cannot be created: %s", e.dir, e.parent)
	}
	if e.readOnly {
		return fmt.Sprintf("%s is on a read-only file system (felix serve writes its lock, catalog and logs under --data); "+
			"remount it read-write, or point --data at a writable directory (%v)", what, e.err)
	}
	who := "this process"
	if uid := os.Getuid(); uid >= 0 {
		who += " (uid " + strconv.Itoa(uid) + ")"
	}
	return fmt.Sprintf("%s is not writable by %s (felix serve writes its lock, catalog and logs under --data); "+
		"give it write permission (chown, or chmod u+w), or point --data at a writable directory (%v)", what, who, e.err)
}

func (e *readOnlyDataError) Unwrap() error { return e.err }

// checkDataDir makes sure felix serve can write dir ("" keeps everything
// in memory): it creates it if need be, and writes and removes a probe
// file. A directory it cannot write is a *readOnlyDataError; any other
// failure is left for the broker to report as it meets it.
func checkDataDir(dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		err = notWritable(dir, err)
		var ro *readOnlyDataError
		var pe *fs.PathError
		if errors.As(err, &ro) && errors.As(err, &pe) {
			ro.parent = filepath.Dir(pe.Path) // mkdir of pe.Path failed: its parent refused
		}
		return err
	}
	probe := filepath.Join(dir, dataDirProbe+"-"+strconv.Itoa(os.Getpid()))
	f, err := os.OpenFile(probe, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return notWritable(dir, err)
	}
	_, werr := f.Write([]byte("felix\n"))
	cerr := f.Close()
	rerr := os.Remove(probe)
	return notWritable(dir, errors.Join(werr, cerr, rerr))
}

// notWritable classifies err: a read-only file system or a permission
// refusal is a *readOnlyDataError, anything else is err itself.
func notWritable(dir string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.EROFS):
		return &readOnlyDataError{dir: dir, readOnly: true, err: err}
	case errors.Is(err, fs.ErrPermission):
		return &readOnlyDataError{dir: dir, err: err}
	}
	return err
}
