package shardlog

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/felixbroker/felix/segment"
)

// A sealed segment opens on its index's head (recover_sealed.go): 72 bytes
// of the index file instead of 24 per entry, which for a log of many
// segments is most of what an open would otherwise read. Its entries,
// which a read needs to find a record, load on first use, through the
// index's checksum: most old segments are never read before retention
// removes them. Until then seg.entries is nil and seg.lazy is set; the
// loaded entries never change, so readers take them without a lock.
type lazyIndex struct {
	loaded atomic.Pointer[[]segment.IndexEntry]
	mu     sync.Mutex // one load at a time; a failed one is tried again
}

// entriesOf returns s's index entries, loading them first when s opened
// on its index's head. A failure is an IO error, or a
// *segment.CorruptionError when the segment's records do not verify.
func (l *Log) entriesOf(s *seg) ([]segment.IndexEntry, error) {
	lz := s.lazy.Load()
	if lz == nil {
		return s.entries, nil
	}
	if e := lz.loaded.Load(); e != nil {
		return *e, nil
	}
	lz.mu.Lock()
	defer lz.mu.Unlock()
	if e := lz.loaded.Load(); e != nil {
		return *e, nil
	}
	entries, err := l.loadEntries(s)
	if err != nil {
		return nil, err
	}
	lz.loaded.Store(&entries)
	return entries, nil
}

// loadEntries reads s's index, checksum and all, and checks it says what
// the open took from its head; an index that no longer loads or agrees
// is rebuilt (and rewritten) by scanning the segment, verifying it.
func (l *Log) loadEntries(s *seg) ([]segment.IndexEntry, error) {
	ix := l.readIndex(s)
	if ix != nil && ix.DataEnd == s.fillPos && ix.Next == s.fillNext && len(ix.Entries) > 0 &&
		int64(ix.Entries[len(ix.Entries)-1].Pos) == s.lastEntryPos {
		return ix.Entries, nil
	}
	l.opts.Logger.Warn("a sealed segment's index no longer loads; scanning the segment instead", "file", indexPath(s))
	sum, err := l.scan(s, true, 0)
	if err != nil {
		return nil, err
	}
	if sum.End != s.fillPos || sum.Next != s.fillNext {
		return nil, &segment.CorruptionError{File: s.path, Pos: sum.End,
			Reason: fmt.Sprintf("records end at byte %d before offset %d; the segment was opened to byte %d before offset %d",
				sum.End, sum.Next, s.fillPos, s.fillNext)}
	}
	if err := l.writeIndexOf(s, sum.Index); err != nil {
		l.opts.Logger.Warn("could not rewrite a segment index; it will be rebuilt next time", "file", indexPath(s), "err", err)
	}
	return sum.Index, nil
}

// entriesToCheck returns s's entries for the verifier without keeping
// them: loaded for a segment nobody has read, they would hold memory (24
// bytes per entry) for as long as the segment is kept.
func (l *Log) entriesToCheck(s *seg) ([]segment.IndexEntry, error) {
	if lz := s.lazy.Load(); lz != nil && lz.loaded.Load() == nil {
		return l.loadEntries(s)
	}
	return l.entriesOf(s)
}

// resolveEntries makes s's entries its own again (seg.entries), for
// Truncate, which reopens a sealed segment for appends. Called with mu and
// wmu held: readers that still see lazy set take the same entries from it.
func (l *Log) resolveEntries(s *seg) error {
	if s.lazy.Load() == nil {
		return nil
	}
	entries, err := l.entriesOf(s)
	if err != nil {
		return err
	}
	s.entries = entries
	s.lazy.Store(nil)
	return nil
}
