package replica

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/felixbroker/felix/segment/vfs"
)

// How a replica tells that it may have lost records it had acknowledged.
// A process that dies leaves its writes in the page cache, which the
// kernel writes out: nothing is lost. A machine that loses power loses
// what was never fsynced. So what decides is whether the machine booted
// again since the replica last ran, without a clean stop in between:
//
//	replica.run    the boot id of the machine the log was last opened on
//	replica.clean  present: the log was closed cleanly after it (synced)
//
// At open, a replica whose replica.run names another boot and that finds
// no replica.clean may have lost its unsynced tail: its fence answers say
// it is not clean, and a promotion counts it for what it has fsynced only
// (for a stream that acknowledges before its fsync, not towards the
// answers enough to promote). Then it writes this boot's id and removes
// the marker, so a crash from now on is seen as one.
const (
	runFileName   = "replica.run"
	cleanFileName = "replica.clean"
)

// BootID is the id of this boot of the machine (Linux:
// /proc/sys/kernel/random/boot_id), "" where there is none to read: a
// replica then cannot tell a power cut from a process crash, and takes
// every stop without a clean marker as a process crash.
func BootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// openStopState reads how the replica in dir last stopped, under boot
// bootID, and records this start: lost reports a stop that may have lost
// unsynced records (another boot since, and no clean marker).
func openStopState(fs vfs.FS, dir, bootID string) (lost bool, err error) {
	prev, err := vfs.ReadFile(fs, filepath.Join(dir, runFileName))
	switch {
	case errors.Is(err, vfs.ErrNotExist):
		prev = nil // a new replica: nothing to lose
	case err != nil:
		return false, fmt.Errorf("felix/replica: reading %s: %w", runFileName, err)
	}
	_, err = fs.Stat(filepath.Join(dir, cleanFileName))
	clean := err == nil
	if err != nil && !errors.Is(err, vfs.ErrNotExist) {
		return false, fmt.Errorf("felix/replica: reading %s: %w", cleanFileName, err)
	}
	lost = len(prev) > 0 && bootID != "" && string(prev) != bootID && !clean
	if clean {
		if err := fs.Remove(filepath.Join(dir, cleanFileName)); err != nil {
			return false, fmt.Errorf("felix/replica: removing %s: %w", cleanFileName, err)
		}
	}
	if err := vfs.WriteFileAtomic(fs, dir, runFileName, []byte(bootID)); err != nil {
		return false, fmt.Errorf("felix/replica: %w", err)
	}
	return lost, nil
}

// MarkCleanStop records that the log in dir was closed cleanly (every
// record it holds is synced): call it once the log's Close has returned
// without an error.
func MarkCleanStop(fs vfs.FS, dir string) error {
	if err := vfs.WriteFileAtomic(fs, dir, cleanFileName, nil); err != nil {
		return fmt.Errorf("felix/replica: %w", err)
	}
	return nil
}
