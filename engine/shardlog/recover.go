package shardlog

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/felixbroker/felix/segment"
)

// prepName is the zero-filled file the preparer readies for the next
// rollover. It holds no records; recovery removes it.
const prepName = "next.prep"

// recover lists the directory, verifies the segments, repairs the tail and
// leaves the log ready for appends.
func (l *Log) recover() (err error) {
	fs, dir := l.opts.FS, l.opts.Dir
	if err := fs.MkdirAll(dir); err != nil {
		return fmt.Errorf("felix/shardlog: creating %s: %w", dir, err)
	}
	if err := l.finishCompaction(); err != nil {
		return err
	}
	bases, err := l.listSegments()
	if err != nil {
		return err
	}
	if bases, err = l.dropBelowStartMark(bases); err != nil { // startmark.go
		return err
	}
	rp, rpOK, err := l.openPoint()
	if err != nil {
		return err
	}
	if bases, err = l.settleUnsealed(bases, rp, rpOK); err != nil {
		return err
	}
	defer func() {
		if err == nil {
			l.durablePoint = point{base: l.active.base, pos: l.active.fillPos}
			err = l.writePoint(l.durablePoint)
		}
	}()
	for len(bases) > 0 {
		base := bases[len(bases)-1]
		err := l.openTail(base, tornAfter(rp, rpOK, base))
		if !errors.Is(err, segment.ErrHeaderMissing) {
			if err != nil {
				return err
			}
			break
		}
		if err := l.removeFile(filepath.Join(dir, segment.SegmentName(bases[len(bases)-1]))); err != nil {
			return err
		}
		if len(bases) == 1 {
			return l.createFirst(bases[0])
		}
		bases = bases[:len(bases)-1]
	}
	if len(bases) == 0 {
		return l.createFirst(0)
	}
	if err := l.openSealed(bases[:len(bases)-1]); err != nil {
		return err
	}
	return l.restoreLastGen()
}

// restoreLastGen makes the log's last generation that of its last record
// when the active segment holds none (a crash right after a rollover made
// it, before a record reached it), so openTail's scan found no generation:
// the newest segment before it that holds a record says it. That segment
// opened on its header, and its generation loads from its index head and
// the records after its last entry (metaOf: a few small reads, kept for
// GenerationEnd), the segment scanned only when its index does not stand.
// When the active segment holds a record this reads nothing.
func (l *Log) restoreLastGen() error {
	list := *l.segs.Load()
	for i := len(list) - 1; i >= 0; i-- {
		s := list[i]
		if s.fillPos == segment.HeaderSize {
			continue // no record: an empty active segment, or compacted away
		}
		if s == l.active {
			return nil // openTail's scan set lastGen from its records
		}
		m, err := l.metaOf(s)
		if err != nil {
			return err
		}
		l.lastGen = m.lastGen
		return nil
	}
	return nil // no segment holds a record: an empty log
}

// listSegments returns the segment bases in order, removing leftovers that
// never held records (a prepared spare) and indexes without a segment.
func (l *Log) listSegments() ([]int64, error) {
	names, err := l.opts.FS.List(l.opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("felix/shardlog: listing %s: %w", l.opts.Dir, err)
	}
	segs := map[int64]bool{}
	var bases []int64
	for _, n := range names {
		if b, suf, ok := segment.ParseName(n); ok && suf == segment.SegmentSuffix {
			segs[b] = true
			bases = append(bases, b)
		}
	}
	for _, n := range names {
		b, suf, ok := segment.ParseName(n)
		orphan := ok && suf == segment.IndexSuffix && !segs[b]
		if n == prepName || strings.HasSuffix(n, ".tmp") || orphan {
			if err := l.removeFile(filepath.Join(l.opts.Dir, n)); err != nil {
				return nil, err
			}
		}
	}
	return bases, nil // List is sorted and names sort by base
}

func (l *Log) removeFile(path string) error {
	if err := l.opts.FS.Remove(path); err != nil {
		return fmt.Errorf("felix/shardlog: removing %s: %w", path, err)
	}
	l.recovery.RemovedFiles = append(l.recovery.RemovedFiles, filepath.Base(path))
	return l.opts.FS.SyncDir(l.opts.Dir)
}

// createFirst starts an empty log whose first record will be at base.
func (l *Log) createFirst(base int64) error {
	s := newSeg(l.opts.Dir, base)
	if err := l.createSegment(s); err != nil {
		return err
	}
	l.tail, l.active = s, s
	l.segs.Store(&segList{s})
	l.setWatermarks(base, base)
	return nil
}

// openTail opens and scans the last segment as the active one, cutting a
// torn tail: damage at or after tornAfter, or shaped like an unfinished write.
func (l *Log) openTail(base, tornAfter int64) error {
	s := newSeg(l.opts.Dir, base)
	f, err := l.opts.FS.OpenReadWrite(s.path)
	if err != nil {
		return fmt.Errorf("felix/shardlog: opening %s: %w", s.path, err)
	}
	s.file = f
	sum, err := l.scan(s, false, tornAfter)
	if err != nil {
		f.Close()
		return err
	}
	if sum.Header.Base != base {
		f.Close()
		return &segment.CorruptionError{File: s.path, Reason: fmt.Sprintf("header base %d in a file named for %d", sum.Header.Base, base)}
	}
	if sum.Torn {
		if err := l.cutTail(s, sum.End, sum.TornBytes); err != nil {
			f.Close()
			return err
		}
	}
	// What the page cache still holds of an earlier process counts as
	// durable from here on: make it so.
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("felix/shardlog: syncing %s: %w", s.path, err)
	}
	// An active segment has no index file; a leftover one is stale.
	if err := l.opts.FS.Remove(indexPath(s)); err == nil {
		l.recovery.RemovedFiles = append(l.recovery.RemovedFiles, filepath.Base(indexPath(s)))
	}
	applySummary(s, &sum)
	if size, err := f.Size(); err == nil && l.prepares() && size < l.opts.SegmentBytes {
		s.unprepared.Store(true) // created without a spare, or trimmed: not zero-filled to its end
	}
	l.tail, l.active = s, s
	l.next, l.lastGen = sum.Next, sum.LastGeneration
	l.recovery.Records += sum.Records
	l.recovery.Segments++
	return nil
}

// cutTail removes an unfinished write: zeros over it when the file goes on
// past it (a prepared segment keeps its blocks), a truncate otherwise.
func (l *Log) cutTail(s *seg, end, torn int64) error {
	size, err := s.file.Size()
	if err != nil {
		return fmt.Errorf("felix/shardlog: %s: %w", s.path, err)
	}
	if end+torn >= size {
		err = s.file.Truncate(end)
	} else {
		_, err = s.file.WriteAt(make([]byte, torn), end)
	}
	if err == nil {
		err = s.file.Sync()
	}
	if err != nil {
		return fmt.Errorf("felix/shardlog: cutting the torn tail of %s at byte %d: %w", s.path, end, err)
	}
	l.recovery.TornBytes += torn
	l.opts.Logger.Warn("cut an unfinished write from the log's tail", "file", s.path, "pos", end, "bytes", torn)
	return nil
}

// openSealed opens every segment before the active one, several at once
// (openAllSealed), checking that the offsets run on without a gap. Each
// opens on its index when it can (loadSealed) and is then queued for the
// background verification; one without a usable index is verified here,
// in full. Damage in several refuses the open with the newest one's.
func (l *Log) openSealed(bases []int64) error {
	opened := l.openAllSealed(bases)
	list := make(segList, 0, len(bases)+1)
	var err error
	for _, o := range opened {
		if o.s != nil {
			list = append(list, o.s)
		}
		if o.err != nil {
			err = o.err
		}
	}
	if err != nil {
		for _, s := range list {
			s.release(l.opts.FS)
		}
		return err
	}
	for _, o := range opened {
		l.noteSealed(o)
	}
	list = append(list, l.active)
	l.segs.Store(&list)
	l.setWatermarks(list[0].base, l.next)
	return nil
}

// noteSealed counts a sealed segment opened, and queues it for the
// background verification when it opened on its index.
func (l *Log) noteSealed(o sealedOpen) {
	if o.lazy && !l.opts.TrustIndexes {
		l.verify.queue = append(l.verify.queue, o.s) // oldest first
	}
	if o.rebuilt {
		l.recovery.IndexRebuilds++
	}
	l.recovery.Segments++
	l.recovery.Records += o.s.fillNext - o.s.base
}

// openOneSealed opens the sealed segment at base, which must end where the
// next segment begins (wantNext). It touches nothing of the log but s, so
// several run at once.
func (l *Log) openOneSealed(base, wantNext int64) sealedOpen {
	s := newSeg(l.opts.Dir, base)
	f, err := l.opts.FS.Open(s.path)
	if err != nil {
		return sealedOpen{err: fmt.Errorf("felix/shardlog: opening %s: %w", s.path, err)}
	}
	s.file = f
	o := sealedOpen{s: s}
	var h segment.Header
	if h, o.lazy, o.rebuilt, err = l.loadSealed(s, wantNext); err == nil {
		err = l.checkSealedEnd(s, h, wantNext)
	}
	if err != nil {
		f.Close()
		return sealedOpen{err: err}
	}
	s.sealed.Store(true)
	return o
}

// loadSealed opens s on its header and size (openOnHeader): lazy is true,
// the rest loads on first use (index_lazy.go) and the background
// verification reads it all. Otherwise it scans s in full, verifying every
// record, and rewrites the index when it was missing or wrong (rebuilt).
// h is the segment's header.
func (l *Log) loadSealed(s *seg, next int64) (h segment.Header, lazy, rebuilt bool, err error) {
	if h, ok := l.openOnHeader(s, next); ok {
		return h, true, false, nil
	}
	sum, err := l.scan(s, true, 0)
	if err != nil {
		return h, false, false, err
	}
	if sum.Header.Base != s.base {
		return h, false, false, &segment.CorruptionError{File: s.path, Reason: fmt.Sprintf("header base %d in a file named for %d", sum.Header.Base, s.base)}
	}
	applySummary(s, &sum)
	if ix := l.readIndex(s); ix == nil || !sameIndex(ix, segment.IndexOf(&sum)) {
		rebuilt = true
		if err := l.writeIndex(s); err != nil {
			l.opts.Logger.Warn("could not rewrite a segment index; it will be rebuilt next time", "file", indexPath(s), "err", err)
		}
	}
	return sum.Header, false, rebuilt, nil
}

func (l *Log) scan(s *seg, sealed bool, tornAfter int64) (segment.Summary, error) {
	size, err := s.file.Size()
	if err != nil {
		return segment.Summary{}, fmt.Errorf("felix/shardlog: %s: %w", s.path, err)
	}
	return segment.Scan(s.file, size, segment.ScanOptions{Name: s.path, Sealed: sealed, TornAfter: tornAfter,
		IndexIntervalBytes: l.opts.IndexIntervalBytes})
}

// readIndex returns the segment's index when the file exists, decodes, and
// agrees with the segment's size; nil otherwise.
func (l *Log) readIndex(s *seg) *segment.Index {
	f, err := l.opts.FS.Open(indexPath(s))
	if err != nil {
		return nil
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil || size > 1<<30 {
		return nil
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil
	}
	ix, err := segment.DecodeIndex(b)
	if err != nil || ix.Base != s.base {
		return nil
	}
	if segSize, err := s.file.Size(); err != nil || segSize < ix.DataEnd {
		return nil
	}
	return ix
}

func sameIndex(a, b *segment.Index) bool {
	if a.Base != b.Base || a.DataEnd != b.DataEnd || a.Next != b.Next || len(a.Entries) != len(b.Entries) {
		return false
	}
	for i := range a.Entries {
		if a.Entries[i] != b.Entries[i] {
			return false
		}
	}
	return true
}

func applySummary(s *seg, sum *segment.Summary) {
	s.compacted = sum.Header.Flags&segment.HeaderFlagCompacted != 0
	s.entries = sum.Index
	s.fillPos, s.fillNext, s.fillGen, s.maxTs = sum.End, sum.Next, sum.LastGeneration, sum.MaxTimestamp
	if n := len(sum.Index); n > 0 {
		s.lastEntryPos = int64(sum.Index[n-1].Pos)
	}
	s.visibleEnd.Store(sum.End)
}

func (l *Log) setWatermarks(start, next int64) {
	l.next = next
	l.start.Store(start)
	l.visible.Store(next)
	l.written.Store(next)
	l.durable.Store(next)
}
