package shardlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/felixbroker/felix/segment/vfs"
	"github.com/zeebo/xxh3"
)

// The start mark: where retention last moved the log's start, made durable
// before retention removes any file. A removed segment's file goes when its
// last reader lets it go (seg.release), so an older segment a reader holds
// can outlive a newer one; after a crash between the two, the directory
// holds a gap. Recovery removes the segments below the mark first (finishing
// what retention began), so a gap below it is never read, and one above it
// is damage, as before.
//
// Format (version 1, frozen): 24 bytes, replaced atomically (a temporary
// file, synced, renamed over, the directory synced):
//
//	0 version (u64, 1) | 8 start offset (i64) | 16 checksum (u64): xxh3 of bytes 0..16
const (
	startMarkName    = "retention.start"
	startMarkSize    = 24
	startMarkVersion = 1
)

func encodeStartMark(start int64) []byte {
	b := make([]byte, startMarkSize)
	binary.LittleEndian.PutUint64(b[0:], startMarkVersion)
	binary.LittleEndian.PutUint64(b[8:], uint64(start))
	binary.LittleEndian.PutUint64(b[16:], xxh3.Hash(b[:16]))
	return b
}

// writeStartMark makes start the log's durable start mark.
func (l *Log) writeStartMark(start int64) error {
	if err := vfs.WriteFileAtomic(l.opts.FS, l.opts.Dir, startMarkName, encodeStartMark(start)); err != nil {
		return fmt.Errorf("felix/shardlog: writing %s: %w", startMarkName, err)
	}
	return nil
}

// readStartMark returns the durable start mark, or ok false when there is
// none. A damaged mark is no mark (and logged): it only ever removes files,
// so without it recovery keeps them, and a gap they leave is found as
// damage rather than dropped.
func (l *Log) readStartMark() (start int64, ok bool) {
	b, err := vfs.ReadFile(l.opts.FS, filepath.Join(l.opts.Dir, startMarkName))
	if errors.Is(err, vfs.ErrNotExist) {
		return 0, false
	}
	if err != nil || len(b) != startMarkSize || binary.LittleEndian.Uint64(b[16:]) != xxh3.Hash(b[:16]) ||
		binary.LittleEndian.Uint64(b[0:]) != startMarkVersion {
		l.opts.Logger.Warn("the retention start mark is unreadable; keeping every segment", "dir", l.opts.Dir, "err", err)
		return 0, false
	}
	return int64(binary.LittleEndian.Uint64(b[8:])), true
}

// dropBelowStartMark removes the segments wholly below the start mark (each
// ends where the next begins, so a segment is wholly below it when the next
// one's base is at or below it) and returns the bases left. The last
// segment always stays.
func (l *Log) dropBelowStartMark(bases []int64) ([]int64, error) {
	start, ok := l.readStartMark()
	if !ok {
		return bases, nil
	}
	for len(bases) > 1 && bases[1] <= start {
		if err := l.removeSegmentFiles(bases[0]); err != nil { // settle.go
			return nil, err
		}
		bases = bases[1:]
	}
	return bases, nil
}
