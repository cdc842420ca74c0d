package shardlog

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/felixbroker/felix/segment"
)

// Compacted segments are written as "compact-<base>.part" and renamed to
// their segment name only by a committed swap; recovery removes parts no
// committed swap names.
const (
	partPrefix = "compact-"
	partSuffix = ".part"
)

func partName(base int64) string { return fmt.Sprintf("%s%020d%s", partPrefix, base, partSuffix) }

func isPartName(name string) bool {
	return strings.HasPrefix(name, partPrefix) && strings.HasSuffix(name, partSuffix)
}

// compactBufBytes is how much of a part is gathered before one write.
const compactBufBytes = 1 << 20

// partWriter writes the records compaction keeps into compacted segments.
// The first part's base is the first offset compacted, so the log's start
// does not move; a new part begins, at the offset of its first record, when
// the current one would pass SegmentBytes or span 2^32 offsets (the index
// stores offsets relative to the base in 32 bits).
type partWriter struct {
	l       *Log
	from    int64
	created int64
	parts   []*seg
	paths   []string
	cur     *seg
	buf     []byte // bytes of cur from file position bufPos, not yet written
	bufPos  int64
}

// add copies one kept record, offset and all, into the current part.
func (w *partWriter) add(r *segment.Record) error {
	size := int64(r.Size())
	switch {
	case w.cur == nil:
		if err := w.begin(w.from); err != nil {
			return err
		}
	case w.cur.fillPos > segment.HeaderSize && w.cur.fillPos+size > w.l.opts.SegmentBytes,
		r.Offset-w.cur.base > math.MaxUint32:
		if err := w.end(); err != nil {
			return err
		}
		if err := w.begin(r.Offset); err != nil {
			return err
		}
	}
	c := w.cur
	pos := c.fillPos
	w.buf = segment.AppendRecord(w.buf, r)
	c.maxTs = max(c.maxTs, r.Timestamp)
	if pos == segment.HeaderSize || r.Generation != c.fillGen || pos-c.lastEntryPos >= int64(w.l.opts.IndexIntervalBytes) {
		c.entries = append(c.entries, segment.IndexEntry{
			RelOffset: uint32(r.Offset - c.base), Pos: uint32(pos), Generation: r.Generation, MaxTimestamp: c.maxTs,
		})
		c.lastEntryPos = pos
	}
	c.fillPos += size
	c.fillNext = r.Offset + 1
	c.fillGen = r.Generation
	if len(w.buf) >= compactBufBytes {
		return w.flush()
	}
	return nil
}

// begin creates the part whose first offset is base and frames its header.
func (w *partWriter) begin(base int64) error {
	fs, path := w.l.opts.FS, filepath.Join(w.l.opts.Dir, partName(base))
	_ = fs.Remove(path) // a leftover of a compaction that never committed
	f, err := fs.Create(path)
	if err != nil {
		return fmt.Errorf("felix/shardlog: creating %s: %w", path, err)
	}
	s := newSeg(w.l.opts.Dir, base)
	s.file, s.compacted = f, true
	w.cur, w.bufPos = s, 0
	w.parts = append(w.parts, s)
	w.paths = append(w.paths, path)
	w.buf = segment.AppendHeader(w.buf[:0], segment.Header{Base: base, Created: w.created, Flags: segment.HeaderFlagCompacted})
	return nil
}

func (w *partWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	if _, err := w.cur.file.WriteAt(w.buf, w.bufPos); err != nil {
		return fmt.Errorf("felix/shardlog: writing %s: %w", w.paths[len(w.paths)-1], err)
	}
	w.bufPos += int64(len(w.buf))
	w.buf = w.buf[:0]
	return nil
}

// end writes and syncs the current part and makes it a sealed segment.
func (w *partWriter) end() error {
	if err := w.flush(); err != nil {
		return err
	}
	if err := w.cur.file.Sync(); err != nil {
		return fmt.Errorf("felix/shardlog: syncing %s: %w", w.paths[len(w.paths)-1], err)
	}
	w.cur.visibleEnd.Store(w.cur.fillPos)
	w.cur.sealed.Store(true)
	w.cur = nil
	return nil
}

// close ends the last part; a compaction that kept nothing still writes
// one empty part, so the log's first offset stays where it was.
func (w *partWriter) close() error {
	if w.cur == nil && len(w.parts) == 0 {
		if err := w.begin(w.from); err != nil {
			return err
		}
	}
	if w.cur == nil {
		return nil
	}
	return w.end()
}

// abort closes and removes every part begun.
func (w *partWriter) abort() { removeParts(w.l, w.parts, w.paths) }

func removeParts(l *Log, parts []*seg, paths []string) {
	for i, p := range parts {
		if p.file != nil {
			p.file.Close()
		}
		_ = l.opts.FS.Remove(paths[i])
	}
}
