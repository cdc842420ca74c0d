package shardlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
	"github.com/zeebo/xxh3"
)

// The commit file: its durable, valid presence is the moment a compaction
// happened. Until then recovery removes the parts; from then on it finishes
// the swap, however often it is interrupted.
//
// Format (version 1, frozen), little-endian:
//
//	 0 magic "FELIXCMP" (8)
//	 8 version (u16) = 1 | reserved (u16) | part count (u32)
//	16 from (i64): first offset compacted, the base of the first part
//	24 to (i64): first offset after the range, the next segment's base
//	32 part bases (i64 each)
//	.. checksum (u64): xxh3 of everything before it
const (
	commitName       = "compact.commit"
	commitMagic      = "FELIXCMP"
	commitVersion    = 1
	commitHeaderSize = 32
	commitPartsMax   = 1 << 20
)

type commitRecord struct {
	from, to int64
	parts    []int64
}

func appendCommit(dst []byte, r commitRecord) []byte {
	dst = append(dst, commitMagic...)
	dst = binary.LittleEndian.AppendUint16(dst, commitVersion)
	dst = binary.LittleEndian.AppendUint16(dst, 0)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(r.parts)))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(r.from))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(r.to))
	for _, b := range r.parts {
		dst = binary.LittleEndian.AppendUint64(dst, uint64(b))
	}
	return binary.LittleEndian.AppendUint64(dst, xxh3.Hash(dst))
}

// decodeCommit returns the record, or ok false for anything not a whole,
// valid commit file (a commit that never became durable).
func decodeCommit(b []byte) (r commitRecord, ok bool) {
	if len(b) < commitHeaderSize+8 || string(b[:8]) != commitMagic ||
		binary.LittleEndian.Uint16(b[8:]) != commitVersion {
		return r, false
	}
	n := int(binary.LittleEndian.Uint32(b[12:]))
	if n < 1 || n > commitPartsMax || len(b) != commitHeaderSize+8*n+8 {
		return r, false
	}
	body := len(b) - 8
	if binary.LittleEndian.Uint64(b[body:]) != xxh3.Hash(b[:body]) {
		return r, false
	}
	r.from = int64(binary.LittleEndian.Uint64(b[16:]))
	r.to = int64(binary.LittleEndian.Uint64(b[24:]))
	for i := range n {
		r.parts = append(r.parts, int64(binary.LittleEndian.Uint64(b[commitHeaderSize+8*i:])))
	}
	return r, r.parts[0] == r.from && r.from < r.to
}

// Commit swaps the compacted segments in, in the order that keeps every
// crash openable and every reopen idempotent:
//
//  1. sync the log, so every record that justified a drop is durable;
//  2. write and sync the commit file, sync the directory (the commit point);
//  3. remove the replaced segments and their indexes, sync the directory;
//  4. rename each part to its segment name, sync the directory;
//  5. remove the commit file, sync the directory;
//  6. swap the segment list in memory (readers inside a replaced segment
//     finish on its open file) and write the parts' indexes.
//
// A failure before 2 completes discards the parts; after it the log is
// poisoned (reopening finishes the swap). ErrCompactionStale: retention or
// truncation removed a segment read since PrepareCompaction.
func (c *Compaction) Commit() (CompactionStats, error) {
	if c.done {
		return c.stats, ErrCompactionStale
	}
	defer c.finish()
	l := c.l
	l.compaction.mu.Lock()
	defer l.compaction.mu.Unlock()
	if err := c.checkCurrent(); err != nil {
		removeParts(l, c.parts, c.partPaths)
		return c.stats, err
	}
	if err := l.Sync(); err != nil {
		removeParts(l, c.parts, c.partPaths)
		return c.stats, err
	}
	rec := commitRecord{from: c.stats.From, to: c.stats.To}
	for _, p := range c.parts {
		rec.parts = append(rec.parts, p.base)
	}
	if err := l.writeCommit(rec); err != nil {
		if l.undoCommit() == nil {
			removeParts(l, c.parts, c.partPaths)
			return c.stats, err
		}
		l.fail(&failure{op: "compaction commit", err: err})
		return c.stats, err
	}
	if err := l.applyCommit(rec); err != nil {
		l.fail(&failure{op: "compaction swap", err: err})
		return c.stats, err
	}
	c.swapIn()
	return c.stats, nil
}

// checkCurrent reports ErrCompactionStale unless the segments read still
// head the list, and ErrClosed once the log is closing.
func (c *Compaction) checkCurrent() error {
	c.l.mu.Lock()
	closing := c.l.closing
	c.l.mu.Unlock()
	if closing {
		return ErrClosed
	}
	list := *c.l.segs.Load()
	if len(list) <= len(c.orig) {
		return ErrCompactionStale
	}
	for i, s := range c.orig {
		if list[i] != s {
			return ErrCompactionStale
		}
	}
	return nil
}

// swapIn publishes the parts in place of the segments read.
func (c *Compaction) swapIn() {
	l := c.l
	l.wmu.Lock()
	cur := *l.segs.Load()
	next := make(segList, 0, len(c.parts)+len(cur)-len(c.orig))
	next = append(next, c.parts...)
	next = append(next, cur[len(c.orig):]...)
	l.segs.Store(&next)
	l.wmu.Unlock()
	for _, s := range c.orig {
		s.release(l.opts.FS) // the list's reference; the file was removed by the swap
	}
	if c.stats.LastDropped >= 0 {
		l.compaction.noteThrough(c.stats.LastDropped + 1)
	}
	for _, p := range c.parts {
		if err := l.writeIndex(p); err != nil {
			l.opts.Logger.Warn("could not write a compacted segment's index", "file", indexPath(p), "err", err)
		}
	}
	l.opts.Logger.Info("compacted sealed segments", "dir", l.opts.Dir, "from", c.stats.From, "to", c.stats.To,
		"segments", c.stats.Segments, "parts", c.stats.Parts, "kept", c.stats.Kept, "records", c.stats.Records,
		"bytes_before", c.stats.BytesBefore, "bytes_after", c.stats.BytesAfter)
}

func (l *Log) writeCommit(rec commitRecord) error {
	fs, path := l.opts.FS, filepath.Join(l.opts.Dir, commitName)
	_ = fs.Remove(path)
	f, err := fs.Create(path)
	if err != nil {
		return fmt.Errorf("felix/shardlog: creating %s: %w", path, err)
	}
	_, err = f.WriteAtSync(appendCommit(nil, rec), 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fs.SyncDir(l.opts.Dir)
	}
	if err != nil {
		return fmt.Errorf("felix/shardlog: writing %s: %w", path, err)
	}
	return nil
}

// undoCommit removes a commit file that may or may not have become
// durable, so the parts may go.
func (l *Log) undoCommit() error {
	err := l.opts.FS.Remove(filepath.Join(l.opts.Dir, commitName))
	if err != nil && !errors.Is(err, vfs.ErrNotExist) {
		return err
	}
	return l.opts.FS.SyncDir(l.opts.Dir)
}

// applyCommit carries out steps 3 to 5 of a committed swap. It is
// idempotent: recovery runs it again after a crash at any point.
func (l *Log) applyCommit(rec commitRecord) error {
	fs, dir := l.opts.FS, l.opts.Dir
	names, err := fs.List(dir)
	if err != nil {
		return fmt.Errorf("felix/shardlog: listing %s: %w", dir, err)
	}
	replaced := map[string]bool{}
	for _, b := range rec.parts {
		replaced[segment.SegmentName(b)] = true
	}
	for _, n := range names {
		b, suf, ok := segment.ParseName(n)
		if !ok || b < rec.from || b >= rec.to || (suf == segment.SegmentSuffix && replaced[n]) {
			continue
		}
		if err := removeIfThere(fs, filepath.Join(dir, n)); err != nil {
			return err
		}
	}
	if err := fs.SyncDir(dir); err != nil {
		return fmt.Errorf("felix/shardlog: syncing %s: %w", dir, err)
	}
	for _, b := range rec.parts {
		err := fs.Rename(filepath.Join(dir, partName(b)), filepath.Join(dir, segment.SegmentName(b)))
		if err != nil && !errors.Is(err, vfs.ErrNotExist) { // not there: renamed before a crash
			return fmt.Errorf("felix/shardlog: renaming %s: %w", partName(b), err)
		}
	}
	if err := fs.SyncDir(dir); err != nil {
		return fmt.Errorf("felix/shardlog: syncing %s: %w", dir, err)
	}
	if err := removeIfThere(fs, filepath.Join(dir, commitName)); err != nil {
		return err
	}
	if err := fs.SyncDir(dir); err != nil {
		return fmt.Errorf("felix/shardlog: syncing %s: %w", dir, err)
	}
	return nil
}

func removeIfThere(fs vfs.FS, path string) error {
	if err := fs.Remove(path); err != nil && !errors.Is(err, vfs.ErrNotExist) {
		return fmt.Errorf("felix/shardlog: removing %s: %w", path, err)
	}
	return nil
}

// finishCompaction runs first in recovery: a valid commit file means a
// compaction committed, and its swap is finished; otherwise the parts of
// one that never committed (and a commit file that never became whole) are
// removed.
func (l *Log) finishCompaction() error {
	fs, dir := l.opts.FS, l.opts.Dir
	if rec, ok := l.readCommit(); ok {
		if err := l.applyCommit(rec); err != nil {
			return err
		}
		l.recovery.RemovedFiles = append(l.recovery.RemovedFiles, commitName)
		return nil
	}
	names, err := fs.List(dir)
	if err != nil {
		return fmt.Errorf("felix/shardlog: listing %s: %w", dir, err)
	}
	for _, n := range names {
		if isPartName(n) || n == commitName {
			if err := l.removeFile(filepath.Join(dir, n)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (l *Log) readCommit() (commitRecord, bool) {
	f, err := l.opts.FS.Open(filepath.Join(l.opts.Dir, commitName))
	if err != nil {
		return commitRecord{}, false
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil || size > commitHeaderSize+8*commitPartsMax+8 {
		return commitRecord{}, false
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
		return commitRecord{}, false
	}
	return decodeCommit(b)
}

// checkSealedEnd checks that the sealed segment s, of header h, ends where
// the next one begins (wantNext): exactly for a segment appended to; at or
// before it for a compacted one, whose dropped records may leave a gap at
// its end.
func (l *Log) checkSealedEnd(s *seg, h segment.Header, wantNext int64) error {
	compacted := h.Flags&segment.HeaderFlagCompacted != 0
	if compacted {
		l.compaction.noteThrough(wantNext)
	}
	if s.fillNext == wantNext || compacted && s.fillNext <= wantNext {
		return nil
	}
	return &segment.CorruptionError{File: s.path, Pos: s.fillPos,
		Reason: fmt.Sprintf("segment ends at offset %d but the next segment starts at %d", s.fillNext, wantNext)}
}
