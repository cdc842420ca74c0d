package shardlog

import (
	"sync"
	"sync/atomic"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// A sealed segment opens on its header and its size (recover_sealed.go):
// what a read needs to serve it. The rest, read from its index and its
// last records, loads on first use: its last generation, newest time and
// last index entry (metaOf: Truncate, GenerationEnd, retention by age),
// and its index entries (entriesOf: a read, the verifier, Truncate),
// through the index's checksum. For a log of many segments most are never
// read before retention removes them. Until then seg.lazy is set and the
// fields it stands for (fillGen, maxTs, lastEntryPos, entries) stay zero;
// what loads never changes, so it is read without a lock.
type lazySealed struct {
	mu      sync.Mutex // one load at a time; a failed one is tried again
	meta    atomic.Pointer[sealedMeta]
	entries atomic.Pointer[[]segment.IndexEntry]
}

// sealedMeta is what a sealed segment's index head and last records say.
type sealedMeta struct {
	lastGen      uint32 // the last record's generation
	maxTs        int64  // the newest record's time
	lastEntryPos int64  // the last index entry's byte position
}

// metaOf returns s's sealedMeta, loading it first when s opened without.
// A failure is an IO error, or a *segment.CorruptionError when s's
// records do not run to where it ends.
func (l *Log) metaOf(s *seg) (sealedMeta, error) {
	lz := s.lazy.Load()
	if lz == nil {
		return sealedMeta{lastGen: s.fillGen, maxTs: s.maxTs, lastEntryPos: s.lastEntryPos}, nil
	}
	if m := lz.meta.Load(); m != nil {
		return *m, nil
	}
	lz.mu.Lock()
	defer lz.mu.Unlock()
	return l.metaLocked(s, lz)
}

func (l *Log) metaLocked(s *seg, lz *lazySealed) (sealedMeta, error) {
	if m := lz.meta.Load(); m != nil {
		return *m, nil
	}
	if m, ok := l.metaFromHead(s); ok {
		lz.meta.Store(&m)
		return m, nil
	}
	return l.rebuildLocked(s, lz)
}

// metaFromHead reads s's index head and checks it against s: its size, its
// end (the next segment's base, or at most that when compacted), and its
// records after the last entry, which also give the newest time.
func (l *Log) metaFromHead(s *seg) (sealedMeta, bool) {
	h, ok := l.readIndexHead(s)
	if !ok || h.DataEnd != s.fillPos || h.Next > s.fillNext || !s.compacted && h.Next != s.fillNext {
		return sealedMeta{}, false
	}
	if h.Entries == 0 {
		return sealedMeta{}, h.DataEnd == segment.HeaderSize
	}
	m := sealedMeta{lastGen: h.Last.Generation, maxTs: h.Last.MaxTimestamp, lastEntryPos: int64(h.Last.Pos)}
	if h.DataEnd-int64(h.Last.Pos) > tailCheckBytesMax {
		return m, true // a huge last record: the verifier reads it
	}
	maxTs, ok := l.checkTail(s, h)
	m.maxTs = maxTs
	return m, ok
}

// rebuildLocked scans s, verifying every record, when its index cannot
// stand for it, and rewrites the index.
func (l *Log) rebuildLocked(s *seg, lz *lazySealed) (sealedMeta, error) {
	l.opts.Logger.Warn("a sealed segment's index is missing or disagrees with it; scanning the segment", "file", indexPath(s))
	sum, err := l.scan(s, true, 0)
	if err != nil {
		return sealedMeta{}, err
	}
	if err := runsToEnd(s, &sum, s.fillPos, s.fillNext); err != nil {
		return sealedMeta{}, err
	}
	m := sealedMeta{lastGen: sum.LastGeneration, maxTs: sum.MaxTimestamp}
	if n := len(sum.Index); n > 0 {
		m.lastEntryPos = int64(sum.Index[n-1].Pos)
	}
	l.rewriteIndex(s, &sum)
	lz.meta.Store(&m)
	lz.entries.Store(&sum.Index)
	return m, nil
}

// entriesOf returns s's index entries, loading them first when s opened
// without them; failures as metaOf's.
func (l *Log) entriesOf(s *seg) ([]segment.IndexEntry, error) {
	lz := s.lazy.Load()
	if lz == nil {
		return s.entries, nil
	}
	if e := lz.entries.Load(); e != nil {
		return *e, nil
	}
	lz.mu.Lock()
	defer lz.mu.Unlock()
	if e := lz.entries.Load(); e != nil {
		return *e, nil
	}
	entries, err := l.loadEntriesLocked(s, lz)
	if err == nil {
		lz.entries.Store(&entries)
	}
	return entries, err
}

// loadEntriesLocked reads s's whole index, checksum and all, and checks it
// says what the meta does; one that does not is rebuilt from a scan.
func (l *Log) loadEntriesLocked(s *seg, lz *lazySealed) ([]segment.IndexEntry, error) {
	m, err := l.metaLocked(s, lz)
	if err != nil {
		return nil, err
	}
	if e := lz.entries.Load(); e != nil {
		return *e, nil // the meta's load rebuilt them
	}
	if ix := l.readIndex(s); indexAgrees(s, ix, m) {
		return ix.Entries, nil
	}
	if _, err := l.rebuildLocked(s, lz); err != nil {
		return nil, err
	}
	return *lz.entries.Load(), nil
}

// indexAgrees reports whether ix, decoded through its checksum, is the
// index whose head gave m.
func indexAgrees(s *seg, ix *segment.Index, m sealedMeta) bool {
	if ix == nil || ix.DataEnd != s.fillPos || len(ix.Entries) == 0 {
		return false
	}
	last := ix.Entries[len(ix.Entries)-1]
	return int64(last.Pos) == m.lastEntryPos && last.Generation == m.lastGen
}

// indexToCheck returns s's index entries for the verifier when its index
// stands (ok), without keeping them: loaded for a segment nobody reads,
// they would hold memory (24 bytes an entry) for as long as the segment is
// kept. It never scans: an index that does not stand is the verifier's to
// rebuild, from its own paced scan (restoreIndex).
func (l *Log) indexToCheck(s *seg) ([]segment.IndexEntry, bool) {
	lz := s.lazy.Load()
	if lz == nil {
		return s.entries, true // final once sealed
	}
	if e := lz.entries.Load(); e != nil {
		return *e, true
	}
	lz.mu.Lock()
	defer lz.mu.Unlock()
	m, ok := l.metaFromHead(s)
	if !ok {
		return nil, false
	}
	ix := l.readIndex(s)
	if !indexAgrees(s, ix, m) {
		return nil, false
	}
	return ix.Entries, true
}

// restoreIndex writes the index the verifier's scan of snap built, unless a
// load rebuilt it meanwhile or s is no longer what was scanned. It waits
// out a compaction, retention or truncation under way (compaction.mu):
// the verifier holds no other lock here.
func (l *Log) restoreIndex(s *seg, snap sealedSnapshot, sum *segment.Summary) {
	l.compaction.mu.Lock()
	defer l.compaction.mu.Unlock()
	if lz := s.lazy.Load(); lz != nil {
		lz.mu.Lock()
		defer lz.mu.Unlock()
		if lz.entries.Load() != nil {
			return
		}
	}
	l.storeIndexOfScan(s, snap.file, sum)
}

// rewriteIndex writes the index a load's scan of s built, with lz.mu held
// and maybe mu or wmu too, so it only tries compaction.mu: while a
// compaction, retention or truncation holds it (the caller's own among
// them) the index is left for the next load to rebuild.
func (l *Log) rewriteIndex(s *seg, sum *segment.Summary) {
	if !l.compaction.mu.TryLock() {
		return
	}
	defer l.compaction.mu.Unlock()
	l.storeIndexOfScan(s, s.file, sum)
}

// storeIndexOfScan writes the index a scan of file built: what its records
// say, not what s was opened to (a compacted segment's records may stop
// before the next base). Called with compaction.mu held, it writes only
// while s is still the log's sealed segment on file: a compaction renames
// its part over s's name and writes the part's index at s's index path,
// and the index of s's old records written after that would stand for
// the part, or for no segment at all. Every swap that takes s from the log
// or changes its file holds compaction.mu, so the check holds until it is
// released. A failure is left for the next load to find.
func (l *Log) storeIndexOfScan(s *seg, file vfs.File, sum *segment.Summary) {
	if !s.sealed.Load() || !l.holds(s) || s.file != file {
		return
	}
	if err := l.storeIndex(s, segment.IndexOf(sum)); err != nil {
		l.opts.Logger.Warn("could not rewrite a segment index; it will be rebuilt next time", "file", indexPath(s), "err", err)
	}
}

// resolveLazy loads all of s that opened lazily into s's own fields, for
// Truncate, which reopens a sealed segment for appends. Called with mu and
// wmu held: readers that still see lazy set take the same from it.
func (l *Log) resolveLazy(s *seg) error {
	if s.lazy.Load() == nil {
		return nil
	}
	m, err := l.metaOf(s)
	if err != nil {
		return err
	}
	entries, err := l.entriesOf(s)
	if err != nil {
		return err
	}
	s.fillGen, s.maxTs, s.lastEntryPos, s.entries = m.lastGen, m.maxTs, m.lastEntryPos, entries
	s.lazy.Store(nil)
	return nil
}
