package shardlog

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/felixbroker/felix/segment"
)

// Errors of compaction, testable with errors.Is.
var (
	// ErrNothingToCompact is a compaction of a log with no sealed segment.
	ErrNothingToCompact = errors.New("felix/shardlog: no sealed segment to compact")
	// ErrCompacting is a compaction begun while another is prepared.
	ErrCompacting = errors.New("felix/shardlog: a compaction is already in progress")
	// ErrCompactionStale is a Commit after retention or truncation changed
	// the segments the compaction read; its work is discarded.
	ErrCompactionStale = errors.New("felix/shardlog: the segments compacted changed before the swap")
)

// KeepFunc decides, for each record of the sealed segments in offset order,
// whether compaction keeps it. r aliases a buffer valid only during the
// call. It runs on the compacting goroutine, must not call into the log, and
// must only drop a record whose loss no reader of the log can notice once
// every record appended before the Commit is durable (a superseded value, a
// delete no older record needs, an expired value).
type KeepFunc func(r *segment.Record) bool

// CompactionStats is what a compaction did.
type CompactionStats struct {
	From, To      int64 // offsets rewritten: [From, To)
	Segments      int   // sealed segments read
	Parts         int   // compacted segments written
	Records, Kept int64
	BytesBefore   int64
	BytesAfter    int64
	LastDropped   int64 // offset of the last record dropped; -1 when none was
}

// compactState is the log's compaction bookkeeping.
type compactState struct {
	// mu serializes the swap of a compaction with retention (which also
	// removes sealed segments); taken before Log.mu and Log.wmu.
	mu sync.Mutex
	// running is set from PrepareCompaction until Commit or Discard.
	running atomic.Bool
	// through: offsets below it may have been removed by compaction; at or
	// above it the log holds every record it ever acknowledged (retention
	// and truncation aside). Conservative after a reopen: the end of the
	// last compacted segment's range.
	through atomic.Int64
}

func (c *compactState) noteThrough(offset int64) {
	for {
		cur := c.through.Load()
		if offset <= cur || c.through.CompareAndSwap(cur, offset) {
			return
		}
	}
}

// CompactedThrough is the offset below which compaction may have removed
// records; a reader that must notice every record (a watch resuming from an
// offset) and starts below it has a gap it cannot see.
func (l *Log) CompactedThrough() int64 { return l.compaction.through.Load() }

// Compaction is a compaction written to disk and not yet swapped in: the
// live records of every sealed segment, copied with their offsets into new
// compacted segment files. Commit swaps them in; Discard removes them.
// Methods are for one goroutine.
type Compaction struct {
	l         *Log
	orig      []*seg // the sealed segments read, a reference held on each
	parts     []*seg // the compacted segments written, not yet in the list
	partPaths []string
	stats     CompactionStats
	done      bool
}

// Compact prepares and commits a compaction: see PrepareCompaction.
func (l *Log) Compact(keep KeepFunc) (CompactionStats, error) {
	c, err := l.PrepareCompaction(keep)
	if err != nil {
		return CompactionStats{}, err
	}
	return c.Commit()
}

// PrepareCompaction reads every sealed segment (all but the active one),
// asks keep about each record, and writes the kept ones, offsets and bytes
// unchanged, into new compacted segments (segment.HeaderFlagCompacted),
// each synced, with the directory synced after them. Nothing a reader or a
// crash sees changes until Commit. Appends, reads and rollovers go on
// meanwhile; a second compaction fails with ErrCompacting, a log with no
// sealed segment with ErrNothingToCompact.
func (l *Log) PrepareCompaction(keep KeepFunc) (*Compaction, error) {
	if !l.compaction.running.CompareAndSwap(false, true) {
		return nil, ErrCompacting
	}
	c := &Compaction{l: l, stats: CompactionStats{LastDropped: -1}}
	if err := l.sealRetired(0); err != nil {
		l.fail(err)
		c.finish()
		return nil, err
	}
	if err := c.takeSealed(); err != nil {
		c.finish()
		return nil, err
	}
	w := partWriter{l: l, from: c.stats.From, created: l.opts.Now().UnixNano()}
	for _, s := range c.orig {
		if err := c.copyLive(&w, s, keep); err != nil {
			w.abort()
			c.finish()
			return nil, err
		}
	}
	if err := w.close(); err != nil {
		w.abort()
		c.finish()
		return nil, err
	}
	c.parts, c.partPaths = w.parts, w.paths
	if err := l.opts.FS.SyncDir(l.opts.Dir); err != nil {
		c.Discard()
		return nil, fmt.Errorf("felix/shardlog: syncing %s after writing compacted segments: %w", l.opts.Dir, err)
	}
	c.stats.Parts = len(c.parts)
	for _, p := range c.parts {
		c.stats.BytesAfter += p.fillPos
	}
	return c, nil
}

// takeSealed takes a reference on every sealed segment: the list's head up
// to the first segment that is active or still retiring (a rollover since
// PrepareCompaction sealed the retiring ones may have added one).
func (c *Compaction) takeSealed() error {
	list := *c.l.segs.Load()
	n := 0
	for n < len(list)-1 && list[n].sealed.Load() {
		n++
	}
	if n == 0 {
		return ErrNothingToCompact
	}
	for _, s := range list[:n] {
		if !s.acquire() {
			return ErrCompactionStale
		}
		c.orig = append(c.orig, s)
		c.stats.BytesBefore += s.fillPos
	}
	c.stats.From, c.stats.To = list[0].base, list[n].base
	c.stats.Segments = len(c.orig)
	return nil
}

// copyLive verifies every record of s, and that they run to its end,
// and hands the kept ones to w. Damage takes the log offline (offline.go):
// a compaction that went on would commit the gap.
func (c *Compaction) copyLive(w *partWriter, s *seg, keep KeepFunc) error {
	sum, err := segment.Scan(s.file, s.fillPos, segment.ScanOptions{
		Name: s.path, Sealed: true, IndexIntervalBytes: c.l.opts.IndexIntervalBytes,
		Visit: func(_ int64, r *segment.Record) error {
			c.stats.Records++
			if !keep(r) {
				c.stats.LastDropped = r.Offset
				return nil
			}
			c.stats.Kept++
			return w.add(r)
		},
	})
	if err == nil {
		err = runsToEnd(s, &sum, s.fillPos, s.fillNext)
	}
	return c.l.takeOffline(err)
}

// Stats is what the compaction read and wrote.
func (c *Compaction) Stats() CompactionStats { return c.stats }

// Discard removes the compacted segments written. Safe after Commit (a
// no-op) and twice.
func (c *Compaction) Discard() {
	if c.done {
		return
	}
	removeParts(c.l, c.parts, c.partPaths)
	c.finish()
}

// finish releases the references on the segments read and lets the next
// compaction begin.
func (c *Compaction) finish() {
	if c.done {
		return
	}
	c.done = true
	for _, s := range c.orig {
		s.release(c.l.opts.FS)
	}
	c.l.compaction.running.Store(false)
}

// after returns the segment that follows s in the list, or nil.
func (l segList) after(s *seg) *seg {
	for i, o := range l {
		if o == s && i+1 < len(l) {
			return l[i+1]
		}
	}
	return nil
}
