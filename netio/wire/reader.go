package wire

import "encoding/binary"

// Reader finds frames in a byte slice. It holds no buffer and no state
// beyond its limits; the zero value uses the default limits. It is safe for
// concurrent use as long as nobody changes Limits.
type Reader struct {
	Limits Limits
}

// Next reports the first frame at the start of buf.
//
//   - A complete frame: f is it (Body aliases buf), need is 0, err is nil.
//     The caller consumes f.Size() bytes and may call Next again on the rest.
//   - Not enough bytes yet: need is how many more bytes the frame needs at
//     least (exactly, once the 4-byte length is in), err is nil. Once the
//     16 header bytes are in, f carries them (Body nil), already checked;
//     before, f is zero.
//   - A frame that can never be valid: err says why (an *Error or a
//     *LimitError; errors.Is with a Code works on both), and f carries the
//     header fields read so far, so the ERROR reply can name RequestID. The
//     stream is no longer framed; the caller answers and closes.
//
// The declared length is checked against Limits.FrameBytesMax as soon as
// the 4 length bytes are in, and the type, the flags and the type's own
// bound (Limits.FrameBytesFor) as soon as the header is: never is a body
// waited for that could not be valid.
// Next never allocates, except to report an unknown frame type.
func (r *Reader) Next(buf []byte) (f Frame, need int, err error) {
	if len(buf) < lengthFieldSize {
		return Frame{}, HeaderSize - len(buf), nil
	}
	length := binary.LittleEndian.Uint32(buf)
	if length < lengthMin {
		return Frame{}, 0, errShortLength
	}
	total := uint64(length) + lengthFieldSize
	if maxBytes := r.Limits.frameBytes(); total > uint64(maxBytes) {
		return Frame{}, 0, &LimitError{Limit: LimitFrameBytes, Max: maxBytes, Got: total}
	}
	if len(buf) < HeaderSize {
		return Frame{}, int(total) - len(buf), nil
	}
	f = Frame{
		Type:      Type(binary.LittleEndian.Uint16(buf[4:])),
		Flags:     Flags(binary.LittleEndian.Uint16(buf[6:])),
		RequestID: binary.LittleEndian.Uint64(buf[8:]),
	}
	if err := r.checkHeader(f, total); err != nil {
		return f, 0, err
	}
	if total > uint64(len(buf)) {
		return f, int(total - uint64(len(buf))), nil
	}
	if total > HeaderSize {
		f.Body = buf[HeaderSize:total:total]
	}
	return f, 0, nil
}

// checkHeader checks a frame's header, its type's bound included, before
// its body is looked at or waited for.
func (r *Reader) checkHeader(f Frame, total uint64) error {
	if err := checkHeader(f); err != nil {
		return err
	}
	if maxBytes := r.Limits.FrameBytesFor(f.Type); total > uint64(maxBytes) {
		return &LimitError{Limit: LimitFrameBytes, Max: maxBytes, Got: total}
	}
	return nil
}

func checkHeader(f Frame) error {
	s, ok := specOf(f.Type)
	if !ok {
		return &Error{Code: CodeUnknownFrameType, Message: f.Type.String()}
	}
	if f.Flags&^s.flags != 0 {
		return errBadFlags
	}
	return nil
}
