package wire

import "encoding/binary"

// Append helpers. Encoders trust their input except where the wire cannot
// express it: a name over 255 bytes is a caller bug (check it with
// Limits.CheckName), and encoders panic rather than truncate it.

func appendU16(b []byte, v uint16) []byte { return binary.LittleEndian.AppendUint16(b, v) }
func appendU32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
func appendU64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }
func appendI64(b []byte, v int64) []byte  { return binary.LittleEndian.AppendUint64(b, uint64(v)) }

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendName(b, name []byte) []byte {
	if len(name) > nameBytesCap {
		panic("felix/wire: name longer than 255 bytes; check names with Limits.CheckName before encoding")
	}
	b = append(b, byte(len(name)))
	return append(b, name...)
}

// appendBlob appends a uvarint length and the bytes: keys and values.
func appendBlob(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// putU32 patches a u32 written earlier (a batch count).
func putU32(b []byte, at int, v uint32) { binary.LittleEndian.PutUint32(b[at:], v) }

func appendUvarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }
