package peer

import (
	"fmt"

	"github.com/felixbroker/felix/netio/wire"
)

// speaks is what one broker offers in the peer handshake, on either side.
type speaks struct {
	id            string
	versionMin    uint16
	versionMax    uint16
	features      wire.Features
	frameBytesMax int // the largest frame it accepts
	inflightMax   int
}

// session is what a handshake settled, from one side: the peer, the
// version and features both speak, and the largest frame the peer
// accepts.
type session struct {
	peer          string
	version       uint16
	features      wire.Features
	frameBytesMax int
}

func (s speaks) hello() wire.PeerHello {
	return wire.PeerHello{VersionMin: s.versionMin, VersionMax: s.versionMax, Features: s.features,
		FrameBytesMax: uint32(s.frameBytesMax), BrokerID: []byte(s.id)}
}

// accept is the listening side: the session h asks for, with the answer to
// send, or the ERROR to refuse it with.
func (s speaks) accept(h wire.PeerHello) (session, wire.PeerHelloOK, *wire.Error) {
	v, f, err := wire.NegotiatePeer(h, s.features)
	if err != nil {
		return session{}, wire.PeerHelloOK{}, err.(*wire.Error)
	}
	if v = min(v, s.versionMax); v < max(h.VersionMin, s.versionMin) { // a broker older than this package
		return session{}, wire.PeerHelloOK{}, &wire.Error{Code: wire.CodeUnsupportedVersion, Message: fmt.Sprintf(
			"broker %q speaks peer protocol versions %d..%d, this broker %d..%d",
			h.BrokerID, h.VersionMin, h.VersionMax, s.versionMin, s.versionMax)}
	}
	ses := session{peer: string(h.BrokerID), version: v, features: f, frameBytesMax: frameLimit(h.FrameBytesMax)}
	ok := wire.PeerHelloOK{Version: v, Features: f, FrameBytesMax: uint32(s.frameBytesMax),
		InflightRequestsMax: uint32(s.inflightMax), BrokerID: []byte(s.id)}
	return ses, ok, nil
}

// check is the dialing side: the session the answer of the broker dialed
// as `want` settles, or why it is refused (ErrRefused). A listener that answers with
// another id, a version outside this broker's range, or features that
// lack what a peer session needs is never taken at its word.
func (s speaks) check(want string, ok wire.PeerHelloOK) (session, error) {
	var refusal string
	switch {
	case string(ok.BrokerID) != want:
		refusal = fmt.Sprintf("the address of broker %q is served by broker %q", want, ok.BrokerID)
	case ok.Version < s.versionMin || ok.Version > s.versionMax:
		refusal = fmt.Sprintf("broker %q chose peer protocol version %d, this broker speaks %d..%d",
			want, ok.Version, s.versionMin, s.versionMax)
	case !ok.Features.Has(wire.PeerFeaturesRequired) || ok.Features&^s.features != 0:
		refusal = fmt.Sprintf("broker %q chose features %v, this broker offered %v and needs %v",
			want, ok.Features, s.features, wire.PeerFeaturesRequired)
	default:
		return session{peer: want, version: ok.Version, features: ok.Features, frameBytesMax: frameLimit(ok.FrameBytesMax)}, nil
	}
	return session{}, wrap(ErrRefused, &wire.Error{Code: wire.CodeInvalidArgument, Message: refusal})
}

// frameLimit is a handshake's frame_bytes_max as a limit: 0 is the
// protocol's default.
func frameLimit(n uint32) int {
	return wire.Limits{FrameBytesMax: int(n)}.Effective().FrameBytesMax
}
