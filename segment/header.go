package segment

import (
	"encoding/binary"
	"fmt"

	"github.com/zeebo/xxh3"
)

// Segment header constants. Frozen.
const (
	HeaderSize    = 64
	Version       = 1
	segmentMagic  = "FELIXSEG"
	headerSumPos  = 56
	headerVerPos  = 8
	headerLenPos  = 10
	headerBasePos = 16
	headerTimePos = 24
	headerFlagPos = 12
)

// Header flag bits (the u32 at byte 12). Frozen; unknown bits refuse the
// segment.
const (
	// HeaderFlagCompacted marks a segment written whole by compaction:
	// its records' offsets increase but may skip (the records compaction
	// dropped), and it covers the offsets up to the next segment's base.
	HeaderFlagCompacted uint32 = 1 << 0

	headerFlagsKnown = HeaderFlagCompacted
)

// Header is the fixed header at the start of every segment file.
type Header struct {
	Base    int64 // offset of the segment's first record
	Created int64 // unix ns when the segment was created
	Flags   uint32
}

// AppendHeader appends the 64-byte header for h to dst.
func AppendHeader(dst []byte, h Header) []byte {
	start := len(dst)
	dst = grow(dst, HeaderSize)
	b := dst[start:]
	clear(b)
	copy(b, segmentMagic)
	binary.LittleEndian.PutUint16(b[headerVerPos:], Version)
	binary.LittleEndian.PutUint16(b[headerLenPos:], HeaderSize)
	binary.LittleEndian.PutUint32(b[headerFlagPos:], h.Flags)
	binary.LittleEndian.PutUint64(b[headerBasePos:], uint64(h.Base))
	binary.LittleEndian.PutUint64(b[headerTimePos:], uint64(h.Created))
	binary.LittleEndian.PutUint64(b[headerSumPos:], xxh3.Hash(b[:headerSumPos]))
	return dst
}

// DecodeHeader checks and decodes a segment header. It returns ErrZero when
// b is all zero (a file created but never given its header), ErrShort when
// b is shorter than a header, and a plain error naming the fault otherwise.
func DecodeHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		if allZero(b) {
			return Header{}, ErrZero
		}
		return Header{}, ErrShort
	}
	b = b[:HeaderSize]
	if allZero(b) {
		return Header{}, ErrZero
	}
	if binary.LittleEndian.Uint64(b[headerSumPos:]) != xxh3.Hash(b[:headerSumPos]) {
		return Header{}, fmt.Errorf("segment header checksum mismatch")
	}
	if string(b[:len(segmentMagic)]) != segmentMagic {
		return Header{}, fmt.Errorf("bad segment magic %q", b[:len(segmentMagic)])
	}
	if v := binary.LittleEndian.Uint16(b[headerVerPos:]); v != Version {
		return Header{}, fmt.Errorf("unsupported segment version %d", v)
	}
	if n := binary.LittleEndian.Uint16(b[headerLenPos:]); n != HeaderSize {
		return Header{}, fmt.Errorf("unsupported segment header length %d", n)
	}
	flags := binary.LittleEndian.Uint32(b[headerFlagPos:])
	if flags&^headerFlagsKnown != 0 {
		return Header{}, fmt.Errorf("unsupported segment header flags %#x", flags)
	}
	return Header{
		Base:    int64(binary.LittleEndian.Uint64(b[headerBasePos:])),
		Created: int64(binary.LittleEndian.Uint64(b[headerTimePos:])),
		Flags:   flags,
	}, nil
}
