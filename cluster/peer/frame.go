package peer

import (
	"encoding/binary"

	"github.com/felixbroker/felix/netio/wire"
)

// requestIDAt is where a frame's request id lies in its header.
const requestIDAt = 8

// checkFrame reports whether b is exactly one whole valid frame within lim
// (its header checked by wire.Reader: the length, a known type, its flags,
// its type's own bound), wrapped in ErrBadFrame when not. The handshake's
// frames are the transport's own. It allocates only for an unknown type.
func checkFrame(b []byte, lim wire.Limits) error {
	f, need, err := (&wire.Reader{Limits: lim}).Next(b)
	switch {
	case err != nil:
		return wrap(ErrBadFrame, err)
	case need != 0 || f.Size() != len(b):
		return ErrBadFrame
	case f.Type == wire.TypePeerHello || f.Type == wire.TypePeerHelloOK:
		return wrap(ErrBadFrame, errHandshakeFrame)
	}
	return nil
}

var errHandshakeFrame = &wire.Error{Code: wire.CodeInvalidArgument, Message: "PEER_HELLO and PEER_HELLO_OK are the transport's own"}

// appendWithID appends frame with its request id replaced by id.
func appendWithID(dst, frame []byte, id uint64) []byte {
	at := len(dst)
	dst = append(dst, frame...)
	binary.LittleEndian.PutUint64(dst[at+requestIDAt:], id)
	return dst
}
