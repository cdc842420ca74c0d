package shardlog

import (
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/felixbroker/felix/segment"
)

// Read appends to dst whole framed records starting at offset from, up to
// maxBytes of them but always at least one when any is visible, and returns
// the extended slice and the offset after the last record returned. Reading
// at End returns no records and no error. An offset below Start or past End
// is an *OffsetError. Records are verified as they are read; damage is a
// *segment.CorruptionError, never bad data, and takes the log offline:
// from then on every Read fails with that error, matching ErrOffline
// (offline.go), so no reader skips past it. Walk the result with
// segment.NewIter. Compaction leaves gaps: a read from an offset it removed
// starts at the next record present, so the first record returned may lie
// past from, and a gap that runs to End returns no records with next End.
// Offsets missing from a segment compaction did not write are damage.
func (l *Log) Read(from int64, maxBytes int, dst []byte) ([]byte, int64, error) {
	for {
		if e := l.offline.err.Load(); e != nil {
			return dst, from, e
		}
		vis, start := l.visible.Load(), l.start.Load()
		if err := l.checkRange(from, start, vis); err != nil || from == vis {
			return dst, from, err
		}
		list := l.segs.Load()
		s := list.find(from)
		if s == nil || !s.acquire() {
			if len(*list) == 0 {
				return dst, from, ErrClosed // the files were released
			}
			continue // retention or truncation moved the log under us: look again
		}
		out, next, err := l.readSeg(s, from, vis, maxBytes, dst)
		s.release(l.opts.FS)
		after := list.after(s)
		if err != nil || next > from || after == nil {
			return out, next, l.takeOffline(err)
		}
		if !s.compacted {
			return out, from, l.goOffline(missing(s, from, after.base))
		}
		from = min(after.base, vis) // from lies in a gap compaction left at the end of s
	}
}

// missing is the damage of a segment (not compacted, so dense) whose
// records stop before offset from although the next one starts at next:
// its tail is gone. A read never steps over it to serve what follows.
func missing(s *seg, from, next int64) *segment.CorruptionError {
	return &segment.CorruptionError{File: s.path, Pos: s.visibleEnd.Load(),
		Reason: fmt.Sprintf("the records stop before offset %d; the next segment begins at offset %d", from, next)}
}

func (l *Log) checkRange(from, start, end int64) error {
	switch {
	case from < start:
		return &OffsetError{Offset: from, Start: start, End: end, Kind: ErrBelowStart}
	case from > end:
		return &OffsetError{Offset: from, Start: start, End: end, Kind: ErrPastEnd}
	}
	return nil
}

// readSeg reads records from one segment: from an index position at or
// before from, skipping what comes before it, stopping at vis, at maxBytes
// (after the first record), or at the segment's visible end. The first
// read reaches at least the next index entry's position when there is
// one, since the record at from ends before it: so a read of one record,
// however large, is one read of about an index interval.
func (l *Log) readSeg(s *seg, from, vis int64, maxBytes int, dst []byte) ([]byte, int64, error) {
	limit := s.visibleEnd.Load()
	pos, next, err := l.positionOf(s, from)
	if err != nil {
		return dst, from, err
	}
	base := len(dst)
	want := int64(maxBytes) + int64(l.opts.IndexIntervalBytes) + segment.RecordOverhead
	want = max(want, next-pos)
	for {
		n := min(limit-pos, want)
		if n <= 0 {
			return dst[:base], from, nil
		}
		buf := growTo(dst, base+int(n))
		read, err := s.file.ReadAt(buf[base:], pos)
		if err != nil && !(errors.Is(err, io.EOF) && int64(read) == n) {
			return dst[:base], from, fmt.Errorf("felix/shardlog: reading %s at byte %d: %w", s.path, pos, err)
		}
		c := collect(buf[base:], from, vis, maxBytes)
		switch {
		case c.err != nil:
			return dst[:base], from, &segment.CorruptionError{File: s.path, Pos: pos + int64(c.errAt), Reason: c.err.Error(), Err: c.err}
		case c.keepEnd > 0:
			m := copy(buf[base:], buf[base+c.keepStart:base+c.keepEnd])
			return buf[:base+m], c.next, nil
		case c.atEnd:
			return dst[:base], from, nil
		case c.skip > 0:
			pos += int64(c.skip) // only records before from were read
			dst = buf[:base]
		default:
			want = int64(c.needMore) // the first wanted record is larger than what was read
			dst = buf[:base]
		}
	}
}

// collected is what collect found in one region read from a segment.
type collected struct {
	keepStart, keepEnd int   // the wanted records, when keepEnd > 0
	next               int64 // offset after the last kept record
	atEnd              bool  // reached vis before any wanted record
	skip               int   // bytes of whole records before from
	needMore           int   // re-read this many bytes: the first wanted record was cut
	err                error // a record that does not verify, at errAt
	errAt              int
}

// collect picks, from region, the records from offset from up to vis and
// maxBytes (always at least one).
func collect(region []byte, from, vis int64, maxBytes int) collected {
	c := collected{keepStart: -1, next: from}
	at := 0
	for at < len(region) {
		rec, n, err := segment.DecodeRecord(region[at:])
		if errors.Is(err, segment.ErrShort) || cutHeader(region[at:], err) {
			if c.keepStart < 0 && at == 0 {
				c.needMore = max(n, segment.RecordHeaderSize) + 1
			}
			break
		}
		if err != nil {
			return collected{err: err, errAt: at}
		}
		if rec.Offset >= vis {
			c.atEnd = c.keepStart < 0
			break
		}
		if rec.Offset >= from {
			if c.keepStart < 0 {
				c.keepStart = at
			} else if at+n-c.keepStart > maxBytes {
				break
			}
			c.keepEnd, c.next = at+n, rec.Offset+1
		}
		at += n
	}
	if c.keepStart < 0 && !c.atEnd && c.needMore == 0 {
		c.skip = at
		if at == 0 {
			c.atEnd = true // nothing decodable at all: the segment's end
		}
	}
	return c
}

// positionOf returns a byte position in s at or before the record at
// offset, from the segment's sparse index, and the position of the next
// index entry (0 when there is none), before which that record ends. A
// sealed segment's entries may load first (index_lazy.go).
func (l *Log) positionOf(s *seg, offset int64) (pos, next int64, err error) {
	if s.sealed.Load() {
		entries, err := l.entriesOf(s) // final once sealed
		pos, next = windowIn(entries, s.base, offset)
		return pos, next, err
	}
	l.mu.Lock()
	entries := s.entries
	l.mu.Unlock()
	pos, next = windowIn(entries, s.base, offset)
	return pos, next, nil
}

// positionIn searches a segment's index entries for offset.
func positionIn(entries []segment.IndexEntry, base, offset int64) int64 {
	pos, _ := windowIn(entries, base, offset)
	return pos
}

// windowIn is positionIn with the position of the next entry (0: none).
func windowIn(entries []segment.IndexEntry, base, offset int64) (pos, next int64) {
	rel := offset - base
	i := sort.Search(len(entries), func(i int) bool { return int64(entries[i].RelOffset) > rel })
	pos = segment.HeaderSize
	if i > 0 {
		pos = int64(entries[i-1].Pos)
	}
	if i < len(entries) {
		next = int64(entries[i].Pos)
	}
	return pos, next
}

// growTo returns b extended to length n, reallocating only when needed.
func growTo(b []byte, n int) []byte {
	if cap(b) >= n {
		return b[:n]
	}
	out := make([]byte, n, n+n/4)
	copy(out, b)
	return out
}
