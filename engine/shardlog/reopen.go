package shardlog

import (
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
)

// spaceProbeName is the file Reopen reserves a segment's space in, to see
// whether space is back. Its name ends in .tmp, so recovery removes one a
// crash left behind.
const spaceProbeName = "space-probe.tmp"

// Reopen opens the log's directory again, as a restart would, and returns
// the new Log: the way back from a failure once its cause is gone (ENOSPC:
// space was freed). Only recovery from disk can clear a poison, since what
// the failed log holds in memory (offsets given to records never written)
// no longer matches the files.
//
// It first checks that a new segment's space can be reserved (a probe file
// of SegmentBytes, preallocated and removed), so the log is not reopened
// into the failure it had; that refusal matches ErrNoSpace and leaves l as
// it was. Otherwise it stops l's writers as Close does, but leaves its
// files open, so reads of l go on while the directory is recovered; the
// caller moves its readers to the new Log and then closes l. If the open
// fails, l stays stopped and readable and Reopen may be called again.
// Appends to l fail from the moment Reopen stops it. Reopen must not run
// concurrently with itself, Truncate, or ApplyRetention on l.
//
// On a file system that cannot preallocate (the probe then reserves
// nothing), a log may be reopened while the disk is still full; its next
// rollover is then refused as before, and Reopen tried again.
func (l *Log) Reopen() (*Log, error) {
	if err := l.probeSpace(); err != nil {
		return nil, err
	}
	if err := l.stopWriting(); err != nil {
		l.opts.Logger.Warn("stopping the shard log to reopen it", "dir", l.opts.Dir, "err", err)
	}
	n, err := Open(l.opts)
	if err != nil {
		return nil, fmt.Errorf("felix/shardlog: reopening %s: %w", l.opts.Dir, err)
	}
	return n, nil
}

// probeSpace reserves SegmentBytes in a file of its own and gives them
// back: nil when a rollover would find the space it needs. A refusal for
// lack of space matches ErrNoSpace.
func (l *Log) probeSpace() error {
	fs, path := l.opts.FS, filepath.Join(l.opts.Dir, spaceProbeName)
	_ = fs.Remove(path)
	f, err := fs.Create(path)
	if err == nil {
		err = f.Preallocate(0, l.opts.SegmentBytes)
		f.Close()
		if rerr := fs.Remove(path); err == nil {
			err = rerr
		}
	}
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return fmt.Errorf("%w: reserving a segment's %d bytes in %s: %w", ErrNoSpace, l.opts.SegmentBytes, l.opts.Dir, err)
	case err != nil:
		return fmt.Errorf("felix/shardlog: reserving a segment's %d bytes in %s: %w", l.opts.SegmentBytes, l.opts.Dir, err)
	}
	return nil
}
