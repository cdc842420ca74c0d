package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/zeebo/xxh3"
)

// DefaultIndexIntervalBytes is the default spacing of sparse index entries.
const DefaultIndexIntervalBytes = 4096

// Index file constants. Frozen.
const (
	indexMagic      = "FELIXIDX"
	indexVersion    = 1
	indexHeaderSize = 48
	indexEntrySize  = 24
	indexSumSize    = 8
	// indexEntriesMax bounds the entries an index file may claim, so a
	// damaged count cannot ask for an absurd allocation.
	indexEntriesMax = 1 << 24
)

// IndexEntry maps one record to its byte position in the segment.
type IndexEntry struct {
	RelOffset    uint32 // record offset minus the segment's base offset
	Pos          uint32 // byte position of the record in the segment
	Generation   uint32 // the record's generation
	MaxTimestamp int64  // largest record timestamp at or before this record
}

// Index is a segment's sparse index.
type Index struct {
	Base    int64 // the segment's base offset
	DataEnd int64 // size in bytes of the segment it describes
	Next    int64 // offset one past the segment's last record
	Entries []IndexEntry
}

// AppendIndex appends the encoded index file for ix to dst.
func AppendIndex(dst []byte, ix *Index) []byte {
	start := len(dst)
	dst = grow(dst, indexHeaderSize+len(ix.Entries)*indexEntrySize+indexSumSize)
	b := dst[start:]
	clear(b[:indexHeaderSize])
	copy(b, indexMagic)
	binary.LittleEndian.PutUint16(b[8:], indexVersion)
	binary.LittleEndian.PutUint16(b[10:], indexEntrySize)
	binary.LittleEndian.PutUint64(b[16:], uint64(ix.Base))
	binary.LittleEndian.PutUint64(b[24:], uint64(ix.DataEnd))
	binary.LittleEndian.PutUint64(b[32:], uint64(ix.Next))
	binary.LittleEndian.PutUint32(b[40:], uint32(len(ix.Entries)))
	p := b[indexHeaderSize:]
	for _, e := range ix.Entries {
		binary.LittleEndian.PutUint32(p[0:], e.RelOffset)
		binary.LittleEndian.PutUint32(p[4:], e.Pos)
		binary.LittleEndian.PutUint32(p[8:], e.Generation)
		binary.LittleEndian.PutUint32(p[12:], 0)
		binary.LittleEndian.PutUint64(p[16:], uint64(e.MaxTimestamp))
		p = p[indexEntrySize:]
	}
	body := len(b) - indexSumSize
	binary.LittleEndian.PutUint64(b[body:], xxh3.Hash(b[:body]))
	return dst
}

// DecodeIndex checks and decodes an index file. An error means the index
// must be rebuilt from its segment; it is never a reason to refuse a log.
func DecodeIndex(b []byte) (*Index, error) {
	if len(b) < indexHeaderSize+indexSumSize {
		return nil, fmt.Errorf("felix/segment: index of %d bytes is too short", len(b))
	}
	count := int(binary.LittleEndian.Uint32(b[40:]))
	if count > indexEntriesMax || len(b) != indexHeaderSize+count*indexEntrySize+indexSumSize {
		return nil, fmt.Errorf("felix/segment: index claims %d entries in %d bytes", count, len(b))
	}
	body := len(b) - indexSumSize
	if binary.LittleEndian.Uint64(b[body:]) != xxh3.Hash(b[:body]) {
		return nil, fmt.Errorf("felix/segment: index checksum mismatch")
	}
	if string(b[:8]) != indexMagic || binary.LittleEndian.Uint16(b[8:]) != indexVersion ||
		binary.LittleEndian.Uint16(b[10:]) != indexEntrySize {
		return nil, fmt.Errorf("felix/segment: unsupported index format")
	}
	ix := &Index{
		Base:    int64(binary.LittleEndian.Uint64(b[16:])),
		DataEnd: int64(binary.LittleEndian.Uint64(b[24:])),
		Next:    int64(binary.LittleEndian.Uint64(b[32:])),
		Entries: make([]IndexEntry, count),
	}
	p := b[indexHeaderSize:]
	for i := range ix.Entries {
		ix.Entries[i] = decodeIndexEntry(p)
		p = p[indexEntrySize:]
	}
	if err := ix.check(b); err != nil {
		return nil, err
	}
	return ix, nil
}

// check rejects an index whose entries are out of order or out of range.
func (ix *Index) check(b []byte) error {
	prev := IndexEntry{}
	for i, e := range ix.Entries {
		if int64(e.Pos) < HeaderSize || int64(e.Pos) >= ix.DataEnd || ix.Base+int64(e.RelOffset) >= ix.Next {
			return fmt.Errorf("felix/segment: index entry %d out of range", i)
		}
		if binary.LittleEndian.Uint32(b[indexHeaderSize+i*indexEntrySize+12:]) != 0 {
			return fmt.Errorf("felix/segment: index entry %d has reserved bits set", i)
		}
		if i > 0 && (e.RelOffset <= prev.RelOffset || e.Pos <= prev.Pos ||
			e.MaxTimestamp < prev.MaxTimestamp || e.Generation < prev.Generation) {
			return fmt.Errorf("felix/segment: index entry %d out of order", i)
		}
		prev = e
	}
	return nil
}

// PosOf returns the byte position to start reading from to find offset: the
// position of the last entry at or before it (HeaderSize when none is).
func (ix *Index) PosOf(offset int64) int64 {
	rel := offset - ix.Base
	i := sort.Search(len(ix.Entries), func(i int) bool { return int64(ix.Entries[i].RelOffset) > rel })
	if i == 0 {
		return HeaderSize
	}
	return int64(ix.Entries[i-1].Pos)
}

// PosOfTime returns the byte position to start reading from to find the
// first record with a timestamp at or after ts: the entry before the first
// one whose running maximum reaches ts.
func (ix *Index) PosOfTime(ts int64) int64 {
	i := sort.Search(len(ix.Entries), func(i int) bool { return ix.Entries[i].MaxTimestamp >= ts })
	if i == 0 {
		return HeaderSize
	}
	return int64(ix.Entries[i-1].Pos)
}

// GenerationEnd returns the offset one past the last record whose
// generation is at most gen, when the index shows a record of a later
// generation in this segment; ok is false when it does not.
func (ix *Index) GenerationEnd(gen uint32) (end int64, ok bool) {
	for _, e := range ix.Entries {
		if e.Generation > gen {
			return ix.Base + int64(e.RelOffset), true
		}
	}
	return 0, false
}

// IndexEntryPos is the byte position of entry i in an index file, for
// errors that name it.
func IndexEntryPos(i int) int64 { return indexHeaderSize + int64(i)*indexEntrySize }

// IndexHead is what an index file's header and last entry say, read
// without the entries before it and so unchecked by the file's checksum:
// enough for a log to open a sealed segment on, when it checks each field
// against the segment itself, before it loads (and checks) the whole index
// with DecodeIndex.
type IndexHead struct {
	Base    int64 // the segment's base offset
	DataEnd int64 // size in bytes of the segment described
	Next    int64 // offset one past the segment's last record
	Entries int
	Last    IndexEntry // the last entry; zero when there are none
}

// ReadIndexHead reads the head of the index file held by r (size bytes):
// 48 bytes of header and the last 24-byte entry. It refuses a file whose
// size disagrees with its entry count and a last entry out of range.
func ReadIndexHead(r io.ReaderAt, size int64) (IndexHead, error) {
	b := make([]byte, indexHeaderSize+indexEntrySize)
	if _, err := r.ReadAt(b[:indexHeaderSize], 0); err != nil && !errors.Is(err, io.EOF) {
		return IndexHead{}, fmt.Errorf("felix/segment: reading an index header: %w", err)
	}
	h, err := decodeIndexHeader(b[:indexHeaderSize], size)
	if err != nil || h.Entries == 0 {
		return h, err
	}
	e := b[indexHeaderSize:]
	if _, err := r.ReadAt(e, IndexEntryPos(h.Entries-1)); err != nil && !errors.Is(err, io.EOF) {
		return IndexHead{}, fmt.Errorf("felix/segment: reading an index entry: %w", err)
	}
	h.Last = decodeIndexEntry(e)
	if int64(h.Last.Pos) < HeaderSize || int64(h.Last.Pos) >= h.DataEnd || h.Base+int64(h.Last.RelOffset) >= h.Next ||
		binary.LittleEndian.Uint32(e[12:]) != 0 {
		return IndexHead{}, fmt.Errorf("felix/segment: index's last entry out of range")
	}
	return h, nil
}

func decodeIndexHeader(b []byte, size int64) (IndexHead, error) {
	if string(b[:8]) != indexMagic || binary.LittleEndian.Uint16(b[8:]) != indexVersion ||
		binary.LittleEndian.Uint16(b[10:]) != indexEntrySize {
		return IndexHead{}, fmt.Errorf("felix/segment: unsupported index format")
	}
	count := int64(binary.LittleEndian.Uint32(b[40:]))
	if count > indexEntriesMax || size != indexHeaderSize+count*indexEntrySize+indexSumSize {
		return IndexHead{}, fmt.Errorf("felix/segment: index claims %d entries in %d bytes", count, size)
	}
	return IndexHead{
		Base:    int64(binary.LittleEndian.Uint64(b[16:])),
		DataEnd: int64(binary.LittleEndian.Uint64(b[24:])),
		Next:    int64(binary.LittleEndian.Uint64(b[32:])),
		Entries: int(count),
	}, nil
}

func decodeIndexEntry(p []byte) IndexEntry {
	return IndexEntry{
		RelOffset:    binary.LittleEndian.Uint32(p[0:]),
		Pos:          binary.LittleEndian.Uint32(p[4:]),
		Generation:   binary.LittleEndian.Uint32(p[8:]),
		MaxTimestamp: int64(binary.LittleEndian.Uint64(p[16:])),
	}
}

// IndexOf builds the index that describes a scanned segment.
func IndexOf(s *Summary) *Index {
	return &Index{Base: s.Header.Base, DataEnd: s.End, Next: s.Next, Entries: s.Index}
}
