package segment

import (
	"encoding/binary"

	"github.com/zeebo/xxh3"
)

// Sizes of the record framing. Frozen: they are the on-disk format.
const (
	RecordHeaderSize  = 32
	RecordTrailerSize = 8
	RecordOverhead    = RecordHeaderSize + RecordTrailerSize

	// RecordBodyMax bounds key plus value of one record. It keeps a
	// corrupt-but-checksummed length from asking for an absurd buffer.
	RecordBodyMax = 64 << 20
	// RecordKeyMax bounds a key: the key length field is 16 bits.
	RecordKeyMax = 1<<16 - 1
)

// Flag bits. The layers above own their meaning; they are registered here
// so they never collide. See the package doc.
const (
	FlagTombstone uint16 = 1 << 0
	FlagExpiry    uint16 = 1 << 1
	FlagControl   uint16 = 1 << 2
	// FlagGenerationStart marks the record a new leader writes first in
	// its generation (cluster/replica); it is always a control record too,
	// so every reader that skips control records skips it.
	FlagGenerationStart uint16 = 1 << 3

	flagsKnown = FlagTombstone | FlagExpiry | FlagControl | FlagGenerationStart
)

// Record is one decoded record. Key and Value alias the bytes it was
// decoded from: they are valid only as long as that buffer is.
type Record struct {
	Offset     int64
	Generation uint32
	Flags      uint16
	Timestamp  int64
	Key        []byte
	Value      []byte
}

// Size is the number of bytes r takes in a segment.
func (r *Record) Size() int { return RecordSize(len(r.Key), len(r.Value)) }

// RecordSize is the framed size of a record with the given key and value
// lengths.
func RecordSize(keyLen, valueLen int) int { return RecordOverhead + keyLen + valueLen }

// AppendRecord appends the framed record to dst and returns the extended
// slice. It panics if the key or body is over its limit: callers check
// limits where the input arrives (the wire codec), so reaching here with an
// oversized record is a bug.
func AppendRecord(dst []byte, r *Record) []byte {
	return AppendRecordParts(dst, r.Offset, r.Generation, r.Flags, r.Timestamp, r.Key, r.Value)
}

// AppendRecordParts is AppendRecord without the Record value, for callers
// that hold the fields separately (the log's append path).
func AppendRecordParts(dst []byte, offset int64, gen uint32, flags uint16, ts int64, key, value []byte) []byte {
	body := len(key) + len(value)
	if len(key) > RecordKeyMax || body > RecordBodyMax {
		panic("felix/segment: record over its size limit reached the encoder")
	}
	start := len(dst)
	dst = grow(dst, RecordSize(len(key), len(value)))
	b := dst[start:]
	binary.LittleEndian.PutUint32(b[4:], uint32(body))
	binary.LittleEndian.PutUint64(b[8:], uint64(offset))
	binary.LittleEndian.PutUint32(b[16:], gen)
	binary.LittleEndian.PutUint16(b[20:], flags)
	binary.LittleEndian.PutUint16(b[22:], uint16(len(key)))
	binary.LittleEndian.PutUint64(b[24:], uint64(ts))
	binary.LittleEndian.PutUint32(b[0:], headerSum(b))
	n := copy(b[RecordHeaderSize:], key)
	n += copy(b[RecordHeaderSize+n:], value)
	end := RecordHeaderSize + n
	binary.LittleEndian.PutUint64(b[end:], xxh3.Hash(b[4:end]))
	return dst
}

// grow extends dst by n bytes, reallocating only when capacity runs out.
func grow(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst[:len(dst)+n]
	}
	out := make([]byte, len(dst)+n, 2*cap(dst)+n)
	copy(out, dst)
	return out
}

func headerSum(b []byte) uint32 { return uint32(xxh3.Hash(b[4:RecordHeaderSize])) }

// DecodeRecord decodes the record at the start of b and returns it with its
// framed size. It checks the header sum before it believes the body length,
// then the body bounds, then the record sum. Errors: ErrShort when b ends
// before the record does (with a verified header, so the length is known),
// ErrZero when the header is all zero bytes (the end of the written part of
// a preallocated file), ErrHeaderChecksum, ErrBadLength, ErrBodyChecksum.
// It never allocates.
func DecodeRecord(b []byte) (Record, int, error) {
	if len(b) < RecordHeaderSize {
		if allZero(b) {
			return Record{}, 0, ErrZero
		}
		return Record{}, 0, ErrShort
	}
	if binary.LittleEndian.Uint32(b[0:]) != headerSum(b) {
		if allZero(b[:RecordHeaderSize]) {
			return Record{}, 0, ErrZero
		}
		return Record{}, 0, ErrHeaderChecksum
	}
	body := int(binary.LittleEndian.Uint32(b[4:]))
	keyLen := int(binary.LittleEndian.Uint16(b[22:]))
	flags := binary.LittleEndian.Uint16(b[20:])
	if body > RecordBodyMax || keyLen > body || flags&^flagsKnown != 0 {
		return Record{}, 0, ErrBadLength
	}
	size := RecordOverhead + body
	if len(b) < size {
		return Record{}, size, ErrShort
	}
	end := RecordHeaderSize + body
	if binary.LittleEndian.Uint64(b[end:]) != xxh3.Hash(b[4:end]) {
		return Record{}, size, ErrBodyChecksum
	}
	r := Record{
		Offset:     int64(binary.LittleEndian.Uint64(b[8:])),
		Generation: binary.LittleEndian.Uint32(b[16:]),
		Flags:      flags,
		Timestamp:  int64(binary.LittleEndian.Uint64(b[24:])),
		Key:        b[RecordHeaderSize : RecordHeaderSize+keyLen : RecordHeaderSize+keyLen],
		Value:      b[RecordHeaderSize+keyLen : end : end],
	}
	return r, size, nil
}

// PeekSize returns the framed size of the record at the start of b after
// checking its header sum, without reading the body. ok is false when the
// header is short, zero or damaged.
func PeekSize(b []byte) (size int, ok bool) {
	if len(b) < RecordHeaderSize || binary.LittleEndian.Uint32(b[0:]) != headerSum(b) {
		return 0, false
	}
	body := int(binary.LittleEndian.Uint32(b[4:]))
	if body > RecordBodyMax || int(binary.LittleEndian.Uint16(b[22:])) > body {
		return 0, false
	}
	return RecordOverhead + body, true
}

func allZero(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
