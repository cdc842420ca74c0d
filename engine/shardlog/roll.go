package shardlog

import (
	"errors"
	"fmt"
	"path/filepath"
	"syscall"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// createSegment makes s's file ready for records, in the order that keeps
// every crash openable: create (or take the prepared spare), preallocate,
// write and sync the header, sync the directory. Only after that may a
// record claim the file. On failure the new file is removed again, so a
// rollover refused for lack of space gives back what it took.
func (l *Log) createSegment(s *seg) error {
	f, fromSpare, err := l.newSegmentFile(s)
	if err != nil {
		return err
	}
	if err := l.readySegmentFile(s, f, fromSpare); err != nil {
		f.Close()
		l.removeNewFile(s, fromSpare)
		return err
	}
	s.file = f
	s.unprepared.Store(l.prepares() && !fromSpare)
	return nil
}

// readySegmentFile writes and syncs f's header, puts a spare in place
// under s's name and syncs the directory.
func (l *Log) readySegmentFile(s *seg, f vfs.File, fromSpare bool) error {
	hdr := segment.AppendHeader(make([]byte, 0, segment.HeaderSize), segment.Header{Base: s.base, Created: l.opts.Now().UnixNano()})
	if _, err := f.WriteAtSync(hdr, 0); err != nil {
		return fmt.Errorf("felix/shardlog: writing the header of %s: %w", s.path, err)
	}
	if fromSpare {
		if err := l.opts.FS.Rename(filepath.Join(l.opts.Dir, prepName), s.path); err != nil {
			return fmt.Errorf("felix/shardlog: renaming the prepared segment to %s: %w", s.path, err)
		}
	}
	if err := l.opts.FS.SyncDir(l.opts.Dir); err != nil {
		return fmt.Errorf("felix/shardlog: syncing %s after creating %s: %w", l.opts.Dir, s.path, err)
	}
	return nil
}

// removeNewFile removes what a failed createSegment left: the new file, or
// the spare under either name. Nothing in it is a record; recovery would
// remove it too, but the space is wanted now.
func (l *Log) removeNewFile(s *seg, fromSpare bool) {
	if fromSpare {
		_ = l.opts.FS.Remove(filepath.Join(l.opts.Dir, prepName))
	}
	_ = l.opts.FS.Remove(s.path)
}

// prepares says whether the log zero-fills spares, and so whether
// appenders leave an unprepared segment for a ready spare: with
// PrepareSegments under OnCommit, where every acknowledgement waits for an
// fdatasync and an fdatasync over blocks that do not exist yet also
// commits their allocation. Under None and Periodic no acknowledgement waits for a sync,
// and the zero-fill would only double the log's disk writes (measured:
// 1 KiB x 16, one pipelined appender, None, about a tenth less MB/s with
// it).
func (l *Log) prepares() bool {
	return l.opts.PrepareSegments && l.opts.Fsync.Kind == FsyncOnCommit
}

// newSegmentFile returns the prepared spare when one is ready, and a newly
// created, preallocated file otherwise.
func (l *Log) newSegmentFile(s *seg) (vfs.File, bool, error) {
	if f := l.prep.take(); f != nil {
		return f, true, nil
	}
	f, err := l.opts.FS.Create(s.path)
	if err != nil {
		return nil, false, fmt.Errorf("felix/shardlog: creating %s: %w", s.path, err)
	}
	if err := f.Preallocate(0, l.opts.SegmentBytes); err != nil {
		if errors.Is(err, syscall.ENOSPC) {
			// Refuse the segment now, before any record is written into
			// it, rather than fail a write halfway through it.
			f.Close()
			_ = l.opts.FS.Remove(s.path)
			return nil, false, fmt.Errorf("felix/shardlog: reserving %d bytes for %s: %w", l.opts.SegmentBytes, s.path, err)
		}
		l.opts.Logger.Debug("preallocation refused", "file", s.path, "err", err)
	}
	return f, false, nil
}

// retire is the first half of a rollover, which retires the active segment
// and makes the next one (whose records the appenders have already placed)
// active; the committer runs both. Under OnCommit it seals the
// active segment here, before records claim the next one. Under None and
// Periodic no acknowledgement waits for a sync, so the retired segment
// joins the retiring list (activate) and the background loop seals it
// (retire.go): the committer goes on at the page cache's pace instead of
// the disk's, and recovery cuts what a crash left unfinished in it. Here it
// only keeps that list within retiringMax.
func (l *Log) retire() error {
	if l.sealsLater() {
		return l.sealRetired(retiringMax - 1)
	}
	return l.seal(l.active)
}

// activate is the second half: it creates s's file and makes s the active
// segment, the old one retired.
func (l *Log) activate(s *seg) error {
	old := l.active
	later := l.sealsLater()
	if err := l.createSegment(s); err != nil {
		return err
	}
	l.wmu.Lock()
	if later {
		l.retiring = append(l.retiring, old)
	} else {
		l.durablePoint = point{base: s.base, pos: segment.HeaderSize}
	}
	l.active = s
	list := (*l.segs.Load()).with(s)
	l.segs.Store(&list)
	l.wmu.Unlock()
	l.unsynced = 0 // s starts clean; the retired segment is synced by its seal
	l.prep.want()
	if later {
		l.askSync()
	} else {
		// Recovery verifies every segment before the point's in full: move
		// it past the sealed one now, not at the next checkpoint.
		l.checkpoint()
	}
	return nil
}

// seal makes a retired segment final: every record synced, the preallocated
// tail cut off, the index written. Its fill fields are final because the
// appenders moved on to the next segment before the committer got here.
func (l *Log) seal(s *seg) error {
	if err := s.file.Truncate(s.fillPos); err != nil {
		return fmt.Errorf("felix/shardlog: trimming %s to %d bytes: %w", s.path, s.fillPos, err)
	}
	began := l.opts.Now()
	err := s.file.Sync()
	l.observeSync(l.opts.Now().Sub(began), err)
	if err != nil {
		return &failure{op: "sync of a retired segment", err: err}
	}
	s.sealed.Store(true)
	if err := l.writeIndex(s); err != nil {
		// The index is never trusted: a missing one is rebuilt on open.
		l.opts.Logger.Warn("could not write a segment index", "file", indexPath(s), "err", err)
	}
	return nil
}

// writeIndex writes s's sparse index beside it.
func (l *Log) writeIndex(s *seg) error {
	return l.storeIndex(s, &segment.Index{Base: s.base, DataEnd: s.fillPos, Next: s.fillNext, Entries: s.entries})
}

// storeIndex writes ix as s's index file.
func (l *Log) storeIndex(s *seg, ix *segment.Index) error {
	path := indexPath(s)
	_ = l.opts.FS.Remove(path)
	f, err := l.opts.FS.Create(path)
	if err != nil {
		return err
	}
	_, err = f.WriteAtSync(segment.AppendIndex(nil, ix), 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
