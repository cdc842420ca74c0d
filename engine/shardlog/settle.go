package shardlog

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// settleUnsealed recovers the segments a crash may have caught unsealed:
// under None and Periodic, the retiring ones (retire.go) between the
// recovery point's segment and the last. Each, but the last, is scanned
// like an active segment (damage past what the point proves durable is an
// unfinished write). One that runs whole to the next segment's base is
// trimmed and synced and becomes an ordinary sealed segment; the first one
// that stops short of it is where the log now ends: every later segment is
// removed, newest first, and the tail recovery that follows cuts it. It
// returns the bases that remain.
func (l *Log) settleUnsealed(bases []int64, rp point, rpOK bool) ([]int64, error) {
	for k := firstUnsealed(bases, rp, rpOK); k < len(bases)-1; k++ {
		whole, err := l.settleOne(bases[k], bases[k+1], tornAfter(rp, rpOK, bases[k]))
		if err != nil {
			return nil, err
		}
		if whole {
			continue
		}
		for j := len(bases) - 1; j > k; j-- {
			if err := l.removeSegmentFiles(bases[j]); err != nil {
				return nil, err
			}
		}
		return bases[:k+1], nil
	}
	return bases, nil
}

// firstUnsealed is the index of the first segment that may be unsealed: the
// recovery point's (or the last segment's, with no valid point). Every
// segment before it was sealed, so synced, before the point moved past it.
func firstUnsealed(bases []int64, rp point, rpOK bool) int {
	if !rpOK {
		return len(bases) - 1
	}
	k := 0
	for k+1 < len(bases) && bases[k+1] <= rp.base {
		k++
	}
	return k
}

// settleOne scans the segment at base and reports whether it runs whole to
// next, the following segment's base; a whole one is trimmed to its last
// record and synced. A compacted segment is never unsealed (compaction
// writes and syncs it whole before the swap): it is left to the sealed
// segments' full verification.
func (l *Log) settleOne(base, next, tornAfter int64) (whole bool, err error) {
	s := newSeg(l.opts.Dir, base)
	f, err := l.opts.FS.OpenReadWrite(s.path)
	if err != nil {
		return false, fmt.Errorf("felix/shardlog: opening %s: %w", s.path, err)
	}
	defer f.Close()
	s.file = f
	sum, err := l.scan(s, false, tornAfter)
	if errors.Is(err, segment.ErrHeaderMissing) {
		// Its header was synced before any later segment existed.
		return false, &segment.CorruptionError{File: s.path, Reason: "no segment header in a segment that is not the last", Err: err}
	}
	if err != nil {
		return false, err
	}
	if sum.Header.Base != base {
		return false, &segment.CorruptionError{File: s.path, Reason: fmt.Sprintf("header base %d in a file named for %d", sum.Header.Base, base)}
	}
	if sum.Header.Flags&segment.HeaderFlagCompacted != 0 {
		return true, nil
	}
	switch {
	case sum.Next > next:
		return false, &segment.CorruptionError{File: s.path, Pos: sum.End,
			Reason: fmt.Sprintf("segment runs to offset %d past the next segment's base %d", sum.Next, next)}
	case sum.Next < next:
		l.opts.Logger.Warn("a retired segment was never synced; the log ends in it",
			"file", s.path, "pos", sum.End, "next", sum.Next, "lost_through", next-1)
		return false, nil
	}
	if err := l.trimSettled(s, &sum); err != nil {
		return false, err
	}
	return true, nil
}

// trimSettled cuts what follows a whole unsealed segment's last record (its
// preallocated tail, or bytes of a write the crash tore) and syncs it.
func (l *Log) trimSettled(s *seg, sum *segment.Summary) error {
	end := sum.End
	if sum.Torn {
		l.recovery.TornBytes += sum.TornBytes
		l.opts.Logger.Warn("cut an unfinished write after the last record of a retired segment", "file", s.path, "pos", end, "bytes", sum.TornBytes)
	}
	size, err := s.file.Size()
	if err == nil && size > end {
		err = s.file.Truncate(end)
	}
	if err == nil {
		err = s.file.Sync()
	}
	if err != nil {
		return fmt.Errorf("felix/shardlog: sealing %s at byte %d: %w", s.path, end, err)
	}
	return nil
}

// removeSegmentFiles removes the segment at base and its index, syncing the
// directory after each.
func (l *Log) removeSegmentFiles(base int64) error {
	if err := l.removeFile(filepath.Join(l.opts.Dir, segment.IndexName(base))); err != nil && !errors.Is(err, vfs.ErrNotExist) {
		return err
	}
	return l.removeFile(filepath.Join(l.opts.Dir, segment.SegmentName(base)))
}
