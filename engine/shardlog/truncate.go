package shardlog

import (
	"fmt"

	"github.com/felixbroker/felix/segment"
)

// Truncate removes every record at or after offset, for a replica whose log
// diverged from its leader's. It waits for appends already queued to be
// written; the caller must not append concurrently. Truncating at End is a
// no-op; below Start is an *OffsetError. It waits for a compaction's swap
// under way; a compaction prepared before it whose segments it cut finds
// the list shorter at its Commit and is discarded (ErrCompactionStale).
func (l *Log) Truncate(offset int64) error {
	l.compaction.mu.Lock() // before mu, as the swap takes them
	defer l.compaction.mu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	for !l.fill.empty() || l.spare == nil {
		if l.poison != nil {
			return l.poison
		}
		l.idle.Wait()
	}
	if l.poison != nil {
		return l.poison
	}
	if err := l.checkRange(offset, l.start.Load(), l.next); err != nil {
		return err
	}
	if offset == l.next {
		return nil
	}
	if err := l.sealRetired(0); err != nil {
		return l.poisonLocked(err)
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	return l.truncateLocked(offset)
}

// truncateLocked runs with mu and wmu held and the committer idle.
func (l *Log) truncateLocked(offset int64) error {
	list := *l.segs.Load()
	keep := len(list)
	for keep > 1 && list[keep-1].base >= offset {
		keep--
	}
	s := list[keep-1]
	for _, r := range list[max(0, keep-2):keep] { // s, and the segment before it for generationBefore
		if err := l.resolveLazy(r); err != nil {
			return err
		}
	}
	gen, pos, err := l.locate(s, offset)
	if err != nil {
		return err
	}
	if err := l.reopenForAppend(s); err != nil {
		return err
	}
	if err := s.file.Truncate(pos); err != nil {
		return &failure{op: "truncate", err: err}
	}
	if err := s.file.Sync(); err != nil {
		return &failure{op: "fdatasync after truncate", err: err}
	}
	for _, gone := range list[keep:] {
		gone.removed.Store(true)
		gone.release(l.opts.FS)
	}
	_ = l.opts.FS.Remove(indexPath(s))
	if err := l.opts.FS.SyncDir(l.opts.Dir); err != nil {
		return &failure{op: "directory sync after truncate", err: err}
	}
	trimSeg(s, offset, pos, gen)
	rest := append(segList(nil), list[:keep]...)
	l.segs.Store(&rest)
	l.tail, l.active = s, s
	l.next, l.lastGen = offset, gen
	l.fill.reset(offset)
	l.visible.Store(min(l.visible.Load(), offset))
	l.written.Store(min(l.written.Load(), offset))
	l.durable.Store(min(l.durable.Load(), offset))
	l.durablePoint = point{base: s.base, pos: pos}
	if err := l.writePoint(l.durablePoint); err != nil {
		return &failure{op: "recovery point after truncate", err: err}
	}
	return nil
}

// locate returns the byte position of offset in s (or s's end when offset
// is s's next) and the generation of the record before it.
func (l *Log) locate(s *seg, offset int64) (gen uint32, pos int64, err error) {
	pos = positionIn(s.entries, s.base, offset) // mu is held
	size := s.visibleEnd.Load()
	buf := make([]byte, size-pos)
	if _, err := s.file.ReadAt(buf, pos); err != nil {
		return 0, 0, fmt.Errorf("felix/shardlog: reading %s to truncate: %w", s.path, err)
	}
	gen = l.generationBefore(s, pos)
	it := segment.NewIter(buf)
	for {
		at := it.Pos()
		rec, ok := it.Next()
		if !ok || rec.Offset >= offset {
			if it.Err() != nil {
				return 0, 0, &segment.CorruptionError{File: s.path, Pos: pos + int64(at), Reason: it.Err().Error(), Err: it.Err()}
			}
			return gen, pos + int64(at), nil
		}
		gen = rec.Generation
	}
}

// generationBefore is the generation of the last record before pos in s, or
// of the segment before s when pos is s's first record.
func (l *Log) generationBefore(s *seg, pos int64) uint32 {
	var gen uint32
	for _, e := range s.entries {
		if int64(e.Pos) >= pos {
			break
		}
		gen = e.Generation
	}
	if gen == 0 && pos == segment.HeaderSize {
		if prev := (*l.segs.Load()).find(s.base - 1); prev != nil && prev != s {
			gen = prev.fillGen
		}
	}
	return gen
}

// reopenForAppend makes a sealed segment writable again.
func (l *Log) reopenForAppend(s *seg) error {
	if !s.sealed.Load() {
		return nil
	}
	f, err := l.opts.FS.OpenReadWrite(s.path)
	if err != nil {
		return fmt.Errorf("felix/shardlog: reopening %s: %w", s.path, err)
	}
	// Readers may still be inside the read-only handle: it is closed with
	// the segment, not now.
	s.retired = append(s.retired, s.file)
	s.file = f
	s.sealed.Store(false)
	s.unprepared.Store(l.prepares()) // sealing cut its zero-filled tail off
	return nil
}

// trimSeg cuts s's in-memory state back to end just before offset.
func trimSeg(s *seg, offset, pos int64, gen uint32) {
	n := 0
	for n < len(s.entries) && s.base+int64(s.entries[n].RelOffset) < offset {
		n++
	}
	s.entries = s.entries[:n:n]
	s.fillPos, s.fillNext, s.fillGen = pos, offset, gen
	s.lastEntryPos = 0
	s.maxTs = 0
	if n > 0 {
		s.lastEntryPos = int64(s.entries[n-1].Pos)
		s.maxTs = s.entries[n-1].MaxTimestamp
	}
	s.visibleEnd.Store(pos)
}
