package shardlog

import (
	"fmt"

	"github.com/felixbroker/felix/segment"
)

// indexCheck holds a sealed segment's index to its records while the
// verifier scans them: reads find records through the entries, so an entry
// that does not name a record's start, offset and generation could make a
// read skip records, and a generation change without an entry would make
// GenerationEnd wrong. An index written with another IndexIntervalBytes is
// still right; only what it claims is checked.
type indexCheck struct {
	entries []segment.IndexEntry
	base    int64
	path    string // the index file, for errors

	next    int // the entry the scan meets next
	records int64
	lastGen uint32
	maxTs   int64
}

// visit is the scan's Visit: it meets each record in order.
func (c *indexCheck) visit(pos int64, r *segment.Record) error {
	newGen := c.records == 0 || r.Generation != c.lastGen
	c.records++
	c.lastGen = r.Generation
	c.maxTs = max(c.maxTs, r.Timestamp)
	if c.next < len(c.entries) && int64(c.entries[c.next].Pos) < pos {
		return c.wrong(c.next, "names byte %d, inside a record", c.entries[c.next].Pos)
	}
	if c.next == len(c.entries) || int64(c.entries[c.next].Pos) != pos {
		if newGen {
			return c.wrong(c.next, "missing: generation %d starts at offset %d without an entry", r.Generation, r.Offset)
		}
		return nil
	}
	e := c.entries[c.next]
	if c.base+int64(e.RelOffset) != r.Offset || e.Generation != r.Generation || e.MaxTimestamp != c.maxTs {
		return c.wrong(c.next, "says offset %d generation %d time %d; the record is offset %d generation %d, time so far %d",
			c.base+int64(e.RelOffset), e.Generation, e.MaxTimestamp, r.Offset, r.Generation, c.maxTs)
	}
	c.next++
	return nil
}

// finish checks, after a clean scan, that every entry was met and that the
// records run exactly to where the segment claims to end: to the end of
// its file, and to the next segment's base (a compacted one, at most
// there). A sealed segment's scan takes zeros after the last record for
// the clean end of the data, so a tail zeroed by damage shows only here.
func (c *indexCheck) finish(s *seg, sum *segment.Summary, snap sealedSnapshot) error {
	if c.next < len(c.entries) {
		return c.wrong(c.next, "names byte %d, past the last record", c.entries[c.next].Pos)
	}
	return runsToEnd(s, sum, snap.end, snap.next)
}

// runsToEnd checks that the scan of a sealed segment s found records up to
// end (its size) and next (the next segment's base; at most that when s is
// compacted). A sealed scan takes trailing zeros for the end of the data,
// so what damage cut off, or zeroed, shows only here.
func runsToEnd(s *seg, sum *segment.Summary, end, next int64) error {
	if sum.End == end && (sum.Next == next || s.compacted && sum.Next < next) {
		return nil
	}
	return &segment.CorruptionError{File: s.path, Pos: sum.End,
		Reason: fmt.Sprintf("records end at byte %d before offset %d; the file ends at byte %d and the next segment begins at offset %d",
			sum.End, sum.Next, end, next)}
}

func (c *indexCheck) wrong(entry int, format string, args ...any) *segment.CorruptionError {
	return &segment.CorruptionError{File: c.path, Pos: segment.IndexEntryPos(entry),
		Reason: fmt.Sprintf("index entry %d ", entry) + fmt.Sprintf(format, args...)}
}
