package datadir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LockFile is the name of the lock file in a data directory.
const LockFile = "felix.lock"

// ErrLocked is returned by Lock when another process (or another Lock in this
// process) holds the directory.
var ErrLocked = errors.New("felix/datadir: data directory is in use")

// LockedError says which directory is held and by whom.
type LockedError struct {
	Dir string
	Pid int // the holder's pid as its lock file says, 0 when unreadable
}

func (e *LockedError) Error() string {
	if e.Pid == 0 {
		return fmt.Sprintf("%v: %s is locked by another process (its pid is unknown)", ErrLocked, e.Dir)
	}
	return fmt.Sprintf("%v: %s is locked by process %d (another broker on this data directory?)", ErrLocked, e.Dir, e.Pid)
}

// Unwrap makes errors.Is(err, ErrLocked) true.
func (e *LockedError) Unwrap() error { return ErrLocked }

// Lock is a held data-directory lock.
type Lock struct {
	f *os.File
}

// Acquire creates dir if needed and takes its lock, or returns a
// *LockedError without waiting when another holder has it.
func Acquire(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("felix/datadir: %w", err)
	}
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("felix/datadir: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		if errors.Is(err, errWouldBlock) {
			return nil, &LockedError{Dir: dir, Pid: holderPid(path)}
		}
		return nil, fmt.Errorf("felix/datadir: locking %s: %w", path, err)
	}
	if err := writePid(f); err != nil {
		unlockFile(f)
		f.Close()
		return nil, fmt.Errorf("felix/datadir: writing %s: %w", path, err)
	}
	return &Lock{f: f}, nil
}

// Release gives the lock up. The file stays (see the package doc).
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := unlockFile(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}

// writePid replaces the file's content with this process's pid. Not synced:
// it only feeds an error message, and a crash leaves a stale pid that the
// lock itself never trusts.
func writePid(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

// holderPid reads the pid a holder wrote, or 0.
func holderPid(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
