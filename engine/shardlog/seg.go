package shardlog

import (
	"path/filepath"
	"sort"
	"sync/atomic"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// seg is one segment file. Its fields are written by exactly one owner at a
// time, as noted on each; readers see them through the atomics or the
// snapshot rules below.
type seg struct {
	base int64
	path string

	// file is set by the committer when it creates or opens the segment,
	// before the segment is published in the list; nil until then.
	file vfs.File
	// retired holds handles replaced by Truncate, closed on release.
	retired []vfs.File

	// refs counts the list's reference plus every reader's. The last
	// release closes the file and, if the segment was removed, deletes it.
	refs    atomic.Int32
	removed atomic.Bool

	// Written by appenders under Log.mu while the segment is the tail
	// being filled; read by the committer and by readers (who copy the
	// entries slice header under Log.mu: entries are only ever appended).
	entries      []segment.IndexEntry
	lastEntryPos int64
	fillPos      int64 // byte position just past the last record placed
	fillNext     int64 // offset one past the last record placed
	fillGen      uint32
	maxTs        int64

	// lazy is set, before the segment is published, on a sealed segment
	// opened on its header and size: its meta (metaOf) and entries
	// (entriesOf) load on first use (index_lazy.go), and fillGen, maxTs,
	// lastEntryPos and entries stay zero. Truncate clears it.
	lazy atomic.Pointer[lazySealed]
	// compacted is set when the segment was written by compaction (its
	// header says so): its offsets may skip records, up to the next base.
	// Set before the segment is published; final.
	compacted bool

	// visibleEnd is the byte position just past the last visible record;
	// the committer stores it before it publishes the offset watermark.
	visibleEnd atomic.Int64

	// sealed is set by the committer once the segment is retired and
	// synced; from then on the fill fields are final.
	sealed atomic.Bool

	// unprepared is set (with PrepareSegments, under OnCommit) when
	// records go into blocks the file does not have yet: a file created
	// and preallocated because no spare was ready, a new log's first
	// segment, or a sealed segment reopened by Truncate. Every fdatasync
	// there also commits the allocation, so appenders leave such a segment
	// for a new one as soon as a spare is ready. Set by the committer or
	// under Log.mu.
	unprepared atomic.Bool
}

func newSeg(dir string, base int64) *seg {
	s := &seg{base: base, path: filepath.Join(dir, segment.SegmentName(base)),
		fillPos: segment.HeaderSize, fillNext: base}
	s.refs.Store(1)
	s.visibleEnd.Store(segment.HeaderSize)
	return s
}

// acquire takes a reader's reference; false if the segment is already gone.
func (s *seg) acquire() bool {
	for {
		r := s.refs.Load()
		if r <= 0 {
			return false
		}
		if s.refs.CompareAndSwap(r, r+1) {
			return true
		}
	}
}

// release drops a reference; the last one closes the file, and deletes it
// when the segment was removed from the log.
func (s *seg) release(fs vfs.FS) {
	if s.refs.Add(-1) != 0 {
		return
	}
	if s.file != nil {
		s.file.Close()
	}
	for _, f := range s.retired {
		f.Close()
	}
	if s.removed.Load() {
		fs.Remove(s.path)
		fs.Remove(indexPath(s))
		// Make the removal durable, so a crash cannot bring back a
		// segment retention or truncation removed (and move Start back).
		fs.SyncDir(filepath.Dir(s.path))
	}
}

func indexPath(s *seg) string {
	return filepath.Join(filepath.Dir(s.path), segment.IndexName(s.base))
}

// segList is an immutable, base-ordered list of segments; the log swaps in a
// new one (copy on write) on rollover, retention and truncation.
type segList []*seg

// find returns the segment that holds offset, or nil.
func (l segList) find(offset int64) *seg {
	i := sort.Search(len(l), func(i int) bool { return l[i].base > offset })
	if i == 0 {
		return nil
	}
	return l[i-1]
}

func (l segList) last() *seg {
	if len(l) == 0 {
		return nil
	}
	return l[len(l)-1]
}

func (l segList) with(s *seg) segList {
	out := make(segList, len(l), len(l)+1)
	copy(out, l)
	return append(out, s)
}
