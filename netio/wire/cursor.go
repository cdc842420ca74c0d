package wire

import (
	"encoding/binary"
	"math/bits"
)

// Why a frame is malformed. They are shared values so that rejecting bad
// input allocates nothing; callers must not modify them.
var (
	errShortLength   = malformed("length field is shorter than the frame header")
	errTruncated     = malformed("body ends inside a field")
	errTrailing      = malformed("bytes left after the last field")
	errBadVarint     = malformed("varint is overlong or not minimal")
	errBadFlags      = malformed("flag bits the frame type does not define")
	errBadEnum       = malformed("a field holds a value outside its enumeration")
	errEmptyBatch    = malformed("a batch with no records")
	errBadOffsets    = malformed("offsets in a batch do not increase")
	errBadCondition  = malformed("a condition or expiry the frame type does not allow")
	errDeleteValue   = malformed("a delete carries a value")
	errAbsentValue   = malformed("a missing entry carries a value")
	errMalformedJSON = malformed("body is not the JSON object the frame type defines")
	errWrongType     = malformed("frame handed to the decoder of another type")
	errEmptyConsumer = malformed("FLAG_GROUP_CONSUMER with an empty consumer name")
)

func malformed(msg string) *Error { return &Error{Code: CodeMalformedFrame, Message: msg} }

// expectFrame checks that f is of type t and carries only flags t defines.
func expectFrame(f Frame, t Type) error {
	if f.Type != t {
		return errWrongType
	}
	s, _ := specOf(t)
	if f.Flags&^s.flags != 0 {
		return errBadFlags
	}
	return nil
}

// expectType is expectFrame for types that define no flags.
func expectType(f Frame, t Type) error { return expectFrame(f, t) }

// cursor reads a body front to back. The first failure sticks: every later
// read returns zero and finish reports the failure. It never allocates
// except to build a *LimitError.
type cursor struct {
	b   []byte
	err error
}

func (c *cursor) fail(err error) {
	if c.err == nil {
		c.err = err
	}
	c.b = nil
}

// take returns the next n bytes in place, capacity clipped so an append by
// the caller cannot overwrite the next field. Zero bytes is nil.
func (c *cursor) take(n int) []byte {
	if n < 0 || n > len(c.b) {
		c.fail(errTruncated)
		return nil
	}
	if n == 0 {
		return nil
	}
	v := c.b[:n:n]
	c.b = c.b[n:]
	return v
}

func (c *cursor) u8() uint8 {
	if len(c.b) < 1 {
		c.fail(errTruncated)
		return 0
	}
	v := c.b[0]
	c.b = c.b[1:]
	return v
}

func (c *cursor) u16() uint16 {
	if v := c.take(2); v != nil {
		return binary.LittleEndian.Uint16(v)
	}
	return 0
}

func (c *cursor) u32() uint32 {
	if v := c.take(4); v != nil {
		return binary.LittleEndian.Uint32(v)
	}
	return 0
}

func (c *cursor) u64() uint64 {
	if v := c.take(8); v != nil {
		return binary.LittleEndian.Uint64(v)
	}
	return 0
}

func (c *cursor) i64() int64 { return int64(c.u64()) }

func (c *cursor) bool8() bool {
	switch c.u8() {
	case 0:
		return false
	case 1:
		return true
	}
	c.fail(errBadEnum)
	return false
}

// uvarint reads a minimal (canonical) unsigned varint.
func (c *cursor) uvarint() uint64 {
	v, n := binary.Uvarint(c.b)
	switch {
	case n == 0:
		c.fail(errTruncated)
		return 0
	case n < 0 || n != uvarintLen(v):
		c.fail(errBadVarint)
		return 0
	}
	c.b = c.b[n:]
	return v
}

func uvarintLen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

// name reads a u8-length-prefixed name of at most maxBytes.
func (c *cursor) name(maxBytes int) []byte {
	n := c.u8()
	if c.err == nil && int(n) > maxBytes {
		c.fail(&LimitError{Limit: LimitNameBytes, Max: maxBytes, Got: uint64(n)})
	}
	return c.take(int(n))
}

// key reads a uvarint-length-prefixed key of at most maxBytes.
func (c *cursor) key(maxBytes int) []byte {
	n := c.uvarint()
	if c.err == nil && n > uint64(maxBytes) {
		c.fail(&LimitError{Limit: LimitKeyBytes, Max: maxBytes, Got: n})
	}
	return c.blobOf(n)
}

// blob reads a uvarint-length-prefixed value, bounded by the body.
func (c *cursor) blob() []byte { return c.blobOf(c.uvarint()) }

func (c *cursor) blobOf(n uint64) []byte {
	if c.err != nil {
		return nil
	}
	if n > uint64(len(c.b)) {
		c.fail(errTruncated)
		return nil
	}
	return c.take(int(n))
}

// count reads a u32 count, checks it against the batch limit and against
// the bytes left (each item needs at least minBytesEach), before anything
// walks it.
func (c *cursor) count(maxItems, minBytesEach int, allowZero bool) int {
	n := c.u32()
	switch {
	case c.err != nil:
		return 0
	case n == 0 && !allowZero:
		c.fail(errEmptyBatch)
	case uint64(n) > uint64(maxItems):
		c.fail(&LimitError{Limit: LimitBatchRecords, Max: maxItems, Got: uint64(n)})
	case uint64(n)*uint64(minBytesEach) > uint64(len(c.b)):
		c.fail(errTruncated)
	}
	if c.err != nil {
		return 0
	}
	return int(n)
}

// finish reports the first failure, or trailing bytes.
func (c *cursor) finish() error {
	if c.err != nil {
		return c.err
	}
	if len(c.b) != 0 {
		return errTrailing
	}
	return nil
}
