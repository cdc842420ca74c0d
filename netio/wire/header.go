package wire

import (
	"encoding/binary"
	"math"
)

// Frame header layout, version 1 (frozen). See the package doc.
const (
	// ProtocolVersion is the newest protocol version this package speaks.
	ProtocolVersion uint16 = 1
	// ProtocolVersionMin is the oldest protocol version this package speaks.
	ProtocolVersionMin uint16 = 1

	// HeaderSize is the size of the frame header: length, type, flags,
	// request id.
	HeaderSize = 16
	// lengthFieldSize is the size of the length field, which counts every
	// byte after itself.
	lengthFieldSize = 4
	// lengthMin is the smallest legal value of the length field: the rest
	// of the header with an empty body.
	lengthMin = HeaderSize - lengthFieldSize
)

// Flags is the u16 flags field of the frame header. Which bits a frame may
// carry depends on its type; a bit its type does not define is malformed.
type Flags uint16

// Frame flags. FlagKeyed's value is fixed by contract (FLAG_BINARY_PUBLISH_KEYED).
const (
	// FlagTimestamp: every record of a publish frame carries an explicit
	// timestamp (i64 unix ns; 0 in a record means "broker stamps it").
	FlagTimestamp Flags = 0x0001
	// FlagKeyed: every record of a publish frame carries a routing key
	// (uvarint length, then bytes; length 0 means no key).
	FlagKeyed Flags = 0x0040
	// FlagGroupConsumer: a GROUP_POLL, GROUP_ACK, GROUP_NACK or
	// GROUP_EXTEND names its consumer (u8 length, then the name) right
	// after its group ref. Without it the broker takes the connection as
	// the consumer.
	FlagGroupConsumer Flags = 0x0002
)

// Frame is one complete frame as the Reader found it. Body aliases the
// bytes given to Reader.Next: it stays valid only while the caller keeps
// those bytes unchanged (with gnet, until Discard).
type Frame struct {
	Type      Type
	Flags     Flags
	RequestID uint64
	Body      []byte
}

// Size is the number of bytes the frame occupies on the wire.
func (f Frame) Size() int { return HeaderSize + len(f.Body) }

// AppendFrame appends a frame with the given header fields and body, as is.
// It is how a frame is forwarded untouched (a publish handed to a shard's
// owner keeps its bytes).
func AppendFrame(dst []byte, t Type, flags Flags, requestID uint64, body []byte) []byte {
	dst, start := beginFrame(dst, t, flags, requestID)
	dst = append(dst, body...)
	return endFrame(dst, start)
}

// beginFrame appends a header whose length field is patched by endFrame.
func beginFrame(dst []byte, t Type, flags Flags, requestID uint64) ([]byte, int) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(t))
	dst = binary.LittleEndian.AppendUint16(dst, uint16(flags))
	dst = binary.LittleEndian.AppendUint64(dst, requestID)
	return dst, start
}

// endFrame writes the length of the frame that starts at start.
func endFrame(dst []byte, start int) []byte {
	n := len(dst) - start - lengthFieldSize
	if uint64(n) > math.MaxUint32 {
		panic("felix/wire: frame longer than the u32 length field can say; the caller must bound it with Limits.FrameBytesMax")
	}
	binary.LittleEndian.PutUint32(dst[start:], uint32(n))
	return dst
}
