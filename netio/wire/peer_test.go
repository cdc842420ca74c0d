package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

func TestNegotiatePeerChoosesTheHighestSharedVersionAndTheIntersection(t *testing.T) {
	h := PeerHello{VersionMin: 1, VersionMax: 9, Features: FeaturesAll | FeaturesReserved, BrokerID: []byte("b")}
	v, f, err := NegotiatePeer(h, PeerFeaturesRequired|FeatureCache)
	if err != nil || v != PeerProtocolVersion || f != PeerFeaturesRequired|FeatureCache {
		t.Fatalf("version %d, features %v, err %v", v, f, err)
	}
}

func TestNegotiatePeerRefusesAnOlderVersion(t *testing.T) {
	for _, h := range []PeerHello{
		{VersionMin: 0, VersionMax: 0, Features: FeaturesAll},
		{VersionMin: PeerProtocolVersion + 1, VersionMax: PeerProtocolVersion + 3, Features: FeaturesAll},
		{VersionMin: 2, VersionMax: 1, Features: FeaturesAll},
	} {
		h.BrokerID = []byte("old")
		_, _, err := NegotiatePeer(h, FeaturesAll)
		if !errors.Is(err, CodeUnsupportedVersion) {
			t.Errorf("versions %d..%d: %v", h.VersionMin, h.VersionMax, err)
		}
	}
}

func TestNegotiatePeerRefusesAPeerWithoutTheBinaryKeyedPublish(t *testing.T) {
	h := PeerHello{VersionMin: 1, VersionMax: 1, Features: FeatureBinaryPublish | FeatureCache, BrokerID: []byte("b")}
	_, _, err := NegotiatePeer(h, FeaturesAll)
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeFeatureNotNegotiated || e.Details.Feature != FeaturePublishKeyed {
		t.Fatalf("err %v", err)
	}
	// Nothing shared at all: both required bits are named.
	h.Features = 0
	if _, _, err := NegotiatePeer(h, FeaturesAll); !errors.As(err, &e) || e.Details.Feature != PeerFeaturesRequired {
		t.Fatalf("err %v", err)
	}
}

func TestAPeerHelloWithoutABrokerIDIsMalformed(t *testing.T) {
	var h PeerHello
	f := mustFrame(t, AppendPeerHello(nil, 1, PeerHello{VersionMin: 1, VersionMax: 1}))
	if err := h.Decode(f, Limits{}); !errors.Is(err, CodeMalformedFrame) {
		t.Fatalf("PEER_HELLO: %v", err)
	}
	var ok PeerHelloOK
	if err := ok.Decode(mustFrame(t, AppendPeerHelloOK(nil, 1, PeerHelloOK{Version: 1})), Limits{}); !errors.Is(err, CodeMalformedFrame) {
		t.Fatalf("PEER_HELLO_OK: %v", err)
	}
}

func TestTheLargestPeerHelloFitsItsBoundAndOneByteMoreDoesNot(t *testing.T) {
	lim := Limits{}.Effective()
	biggest := AppendPeerHello(nil, 1, PeerHello{VersionMin: 1, VersionMax: 1, BrokerID: bytes.Repeat([]byte{'b'}, lim.NameBytesMax)})
	if len(biggest) != lim.FrameBytesFor(TypePeerHello) {
		t.Fatalf("the largest PEER_HELLO is %d bytes, its bound %d", len(biggest), lim.FrameBytesFor(TypePeerHello))
	}
	over := append(biggest, 0)
	binary.LittleEndian.PutUint32(over, uint32(len(over)-lengthFieldSize))
	if _, _, err := (&Reader{}).Next(over[:HeaderSize]); !errors.Is(err, CodeFrameTooLarge) {
		t.Fatalf("a PEER_HELLO one byte over its bound: %v", err)
	}
}
