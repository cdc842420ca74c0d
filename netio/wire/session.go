package wire

// Ping is the body of PING and PONG: an opaque u64 the sender chooses (a
// send time, a counter) and the answering PONG echoes, with the request id.
// Either peer may ping.
//
//	u64 payload
type Ping struct {
	Payload uint64
}

// AppendPing appends a PING frame.
func AppendPing(dst []byte, requestID, payload uint64) []byte {
	return appendPingPong(dst, TypePing, requestID, payload)
}

// AppendPong appends a PONG frame answering a PING.
func AppendPong(dst []byte, requestID, payload uint64) []byte {
	return appendPingPong(dst, TypePong, requestID, payload)
}

func appendPingPong(dst []byte, t Type, requestID, payload uint64) []byte {
	dst, start := beginFrame(dst, t, 0, requestID)
	dst = appendU64(dst, payload)
	return endFrame(dst, start)
}

// Decode reads a PING or a PONG frame.
func (p *Ping) Decode(f Frame, _ Limits) error {
	t := TypePing
	if f.Type == TypePong {
		t = TypePong
	}
	if err := expectType(f, t); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	p.Payload = c.u64()
	return c.finish()
}

// OK is the generic success answer of a request that returns nothing else.
// Its body is empty.
type OK struct{}

// AppendOK appends an OK frame.
func AppendOK(dst []byte, requestID uint64) []byte {
	dst, start := beginFrame(dst, TypeOK, 0, requestID)
	return endFrame(dst, start)
}

// Decode checks an OK frame.
func (*OK) Decode(f Frame, _ Limits) error {
	if err := expectType(f, TypeOK); err != nil {
		return err
	}
	if len(f.Body) != 0 {
		return errTrailing
	}
	return nil
}
