package wire

import "fmt"

// Peer frames: what one broker sends another over the peer transport
// (cluster/peer). A peer connection carries this protocol's frames with
// the same header and codec; only its handshake differs, so that a client
// can never be taken for a broker nor a broker for a client: the dialing
// broker sends PEER_HELLO (not HELLO), the listening one answers
// PEER_HELLO_OK or ERROR and closes. After it, the dialer sends requests
// (a forwarded PUBLISH under FlagKeyed, a cache or counter frame, ...) and
// the listener answers each with the request's id.
//
// The peer protocol has a version of its own (PeerProtocolVersion), since
// brokers of one cluster upgrade one at a time: the highest version in both
// ranges is chosen, none is unsupported_version. Features are the client
// feature bits the sender serves to peers; PeerFeaturesRequired must be in
// the intersection, or the handshake is refused with
// feature_not_negotiated.

// Peer protocol versions.
const (
	// PeerProtocolVersion is the newest peer protocol version this
	// package speaks.
	PeerProtocolVersion uint16 = 1
	// PeerProtocolVersionMin is the oldest it speaks.
	PeerProtocolVersionMin uint16 = 1
)

// PeerFeaturesRequired is what every peer session must have negotiated: a
// forwarded publish is the binary keyed encoding, never PUBLISH_JSON.
const PeerFeaturesRequired = FeatureBinaryPublish | FeaturePublishKeyed

// PeerHello is the dialing broker's first frame.
//
//	u16 version min | u16 version max | u64 features |
//	u32 frame_bytes_max | u8 len | broker id
type PeerHello struct {
	VersionMin uint16
	VersionMax uint16
	Features   Features
	// FrameBytesMax is the largest frame the sender accepts: the answers
	// it is sent must fit.
	FrameBytesMax uint32
	BrokerID      []byte // the sender's id, 1 to Limits.NameBytesMax bytes
}

// PeerHelloOK is the listening broker's answer.
//
//	u16 version | u64 features | u32 frame_bytes_max |
//	u32 inflight_requests_max | u8 len | broker id
type PeerHelloOK struct {
	Version  uint16
	Features Features // the intersection of both brokers' features
	// FrameBytesMax is the largest request the listener accepts.
	FrameBytesMax uint32
	// InflightRequestsMax bounds the requests the dialer may have awaiting
	// an answer on the connection; 0 is no bound.
	InflightRequestsMax uint32
	BrokerID            []byte // the listener's id
}

// peerHelloFixedBytes is a PEER_HELLO's body less its broker id.
const peerHelloFixedBytes = 2 + 2 + 8 + 4 + 1

var errEmptyBrokerID = malformed("a peer handshake with an empty broker id")

// AppendPeerHello appends a PEER_HELLO frame.
func AppendPeerHello(dst []byte, requestID uint64, h PeerHello) []byte {
	dst, start := beginFrame(dst, TypePeerHello, 0, requestID)
	dst = appendU16(dst, h.VersionMin)
	dst = appendU16(dst, h.VersionMax)
	dst = appendU64(dst, uint64(h.Features))
	dst = appendU32(dst, h.FrameBytesMax)
	dst = appendName(dst, h.BrokerID)
	return endFrame(dst, start)
}

// Decode reads a PEER_HELLO frame; BrokerID aliases it. An empty broker id
// is malformed.
func (h *PeerHello) Decode(f Frame, lim Limits) error {
	if err := expectType(f, TypePeerHello); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	h.VersionMin = c.u16()
	h.VersionMax = c.u16()
	h.Features = Features(c.u64())
	h.FrameBytesMax = c.u32()
	h.BrokerID = c.name(lim.nameBytes())
	if c.err == nil && len(h.BrokerID) == 0 {
		c.fail(errEmptyBrokerID)
	}
	return c.finish()
}

// AppendPeerHelloOK appends a PEER_HELLO_OK frame.
func AppendPeerHelloOK(dst []byte, requestID uint64, h PeerHelloOK) []byte {
	dst, start := beginFrame(dst, TypePeerHelloOK, 0, requestID)
	dst = appendU16(dst, h.Version)
	dst = appendU64(dst, uint64(h.Features))
	dst = appendU32(dst, h.FrameBytesMax)
	dst = appendU32(dst, h.InflightRequestsMax)
	dst = appendName(dst, h.BrokerID)
	return endFrame(dst, start)
}

// Decode reads a PEER_HELLO_OK frame; BrokerID aliases it.
func (h *PeerHelloOK) Decode(f Frame, lim Limits) error {
	if err := expectType(f, TypePeerHelloOK); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	h.Version = c.u16()
	h.Features = Features(c.u64())
	h.FrameBytesMax = c.u32()
	h.InflightRequestsMax = c.u32()
	h.BrokerID = c.name(lim.nameBytes())
	if c.err == nil && len(h.BrokerID) == 0 {
		c.fail(errEmptyBrokerID)
	}
	return c.finish()
}

// NegotiatePeer is the listening broker's side of the peer handshake,
// pure: the version both speak (the highest in both ranges) and the
// features both have. A range that misses this package's is
// unsupported_version; an intersection without PeerFeaturesRequired is
// feature_not_negotiated, naming the missing bits.
func NegotiatePeer(hello PeerHello, own Features) (version uint16, features Features, err error) {
	lo, hi := max(hello.VersionMin, PeerProtocolVersionMin), min(hello.VersionMax, PeerProtocolVersion)
	if hello.VersionMin > hello.VersionMax || lo > hi {
		return 0, 0, &Error{Code: CodeUnsupportedVersion, Message: fmt.Sprintf(
			"broker %q speaks peer protocol versions %d..%d, this broker %d..%d",
			hello.BrokerID, hello.VersionMin, hello.VersionMax, PeerProtocolVersionMin, PeerProtocolVersion)}
	}
	features = hello.Features & own & FeaturesAll
	if missing := PeerFeaturesRequired &^ features; missing != 0 {
		return 0, 0, &Error{Code: CodeFeatureNotNegotiated, Details: Details{Feature: missing},
			Message: fmt.Sprintf("broker %q and this broker share no %v: a peer session needs %v",
				hello.BrokerID, missing, PeerFeaturesRequired)}
	}
	return hi, features, nil
}
