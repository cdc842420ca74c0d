package wire

// FORWARD (0x000B) is a peer frame: one client request that a broker which
// does not lead the request's shard hands to the broker that does, with
// the client's credential, so that the leader verifies the credential
// again instead of trusting the forwarding broker's verdict.
//
//	FORWARD (0x000B), forwarding broker -> leader, flags none
//	+----------+------------+------------------------------------------+
//	| cred len | credential | inner frame: one whole client frame      |
//	| u16      | (cred len) | (its 16-byte header and body), a request |
//	+----------+------------+------------------------------------------+
//
// cred len is at most Limits.TokenBytesMax (8 KiB by default: the bound of
// HELLO's token, which is what a credential is); 0 is a client with auth
// off. The inner frame fills the rest of the body exactly and is held to
// the receiver's client limits (Limits.FrameBytesFor its type), never to
// the peer connection's larger frame limit. It is a client request: a
// peer-only frame (PEER_HELLO, PEER_HELLO_OK, FORWARD) inside is
// malformed, so a FORWARD is never nested. Its request id is the
// forwarding broker's to choose; the receiver assigns its own.
//
// The answer to a FORWARD is the inner request's own answer, one frame
// (PUBLISH_ACK, CACHE_VALUE, CACHE_WRITTEN, COUNTER_VALUE, or ERROR), with
// the FORWARD's request id. A forwarded publish asks for AckPerBatch, so
// that exactly one answer comes.
type Forward struct {
	// Credential is the client's raw token; it aliases the frame.
	Credential []byte
	// Inner is the forwarded request; its Body aliases the frame.
	Inner Frame
}

var (
	errForwardInner  = malformed("a FORWARD must carry exactly one whole frame")
	errForwardNested = malformed("a FORWARD carries a client request, not a peer frame")
)

// ForwardWriter completes a FORWARD whose inner frame the caller appends
// in place (BeginForward), so a forwarded publish is encoded once, straight
// into the buffer it is sent from.
type ForwardWriter struct{ start int }

// BeginForward appends a FORWARD's header and credential to dst; the
// caller then appends exactly one frame (any AppendX or batch writer) and
// calls Finish. A credential over 65,535 bytes panics: the caller bounds
// it (a connection's token was bounded by Limits.TokenBytesMax at HELLO).
func BeginForward(dst []byte, requestID uint64, cred []byte) ([]byte, ForwardWriter) {
	if len(cred) > tokenBytesCap {
		panic("felix/wire: a FORWARD credential longer than 65,535 bytes")
	}
	dst, start := beginFrame(dst, TypeForward, 0, requestID)
	dst = appendU16(dst, uint16(len(cred)))
	dst = append(dst, cred...)
	return dst, ForwardWriter{start: start}
}

// Finish writes the length of the FORWARD begun in dst and returns dst.
func (w ForwardWriter) Finish(dst []byte) []byte { return endFrame(dst, w.start) }

// AppendForward appends a FORWARD carrying inner, one whole frame, as is.
func AppendForward(dst []byte, requestID uint64, cred, inner []byte) []byte {
	dst, w := BeginForward(dst, requestID, cred)
	dst = append(dst, inner...)
	return w.Finish(dst)
}

// Decode reads a FORWARD frame; Credential and Inner alias it. The inner
// frame is checked as the Reader checks a frame (length, type, flags, its
// type's bound under lim) and must fill the body exactly; its own body is
// left to its decoder.
func (m *Forward) Decode(f Frame, lim Limits) error {
	if err := expectType(f, TypeForward); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	n := c.u16()
	if c.err == nil && int(n) > lim.tokenBytes() {
		c.fail(&LimitError{Limit: LimitTokenBytes, Max: lim.tokenBytes(), Got: uint64(n)})
	}
	cred := c.take(int(n))
	if c.err != nil {
		return c.err
	}
	inner, need, err := (&Reader{Limits: lim}).Next(c.b)
	switch {
	case err != nil:
		return err
	case need != 0 || inner.Size() != len(c.b):
		return errForwardInner
	case peerOnly(inner.Type):
		return errForwardNested
	}
	*m = Forward{Credential: cred, Inner: inner}
	return nil
}

// peerOnly reports whether t is a frame only brokers exchange, over the
// peer transport.
func peerOnly(t Type) bool {
	return t == TypePeerHello || t == TypePeerHelloOK || t == TypeForward || t>>8 == TypeReplicate>>8
}

// PeerOnly reports whether t is a frame only brokers exchange: a client
// connection refuses it.
func PeerOnly(t Type) bool { return peerOnly(t) }

// PublishAckMode reads the ack mode of a PUBLISH or PUBLISH_BATCH from the
// fields before it (the stream ref), without walking the records: what a
// broker serving a FORWARD checks before it takes the publish on (it must
// be AckPerBatch: one answer). The records are checked by Publish.Decode.
func PublishAckMode(f Frame, lim Limits) (AckMode, error) {
	if f.Type != TypePublish && f.Type != TypePublishBatch {
		return 0, errWrongType
	}
	c := cursor{b: f.Body}
	c.streamRef(lim.nameBytes())
	a := c.ackMode()
	return a, c.err
}
