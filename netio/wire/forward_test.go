package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// A FORWARD built in place (BeginForward, an encoder, Finish) is the same
// bytes as AppendForward of the encoded frame, and decodes back to the
// credential and the inner frame, aliasing it.
func TestAForwardBuiltInPlaceIsTheAppendedOne(t *testing.T) {
	buf, w := BeginForward(nil, 9, forwardToken)
	buf = w.Finish(AppendPublishBatch(buf, 41, gRef, AckPerBatch, gRecords[:2]))
	if want := AppendForward(nil, 9, forwardToken, forwardPublish); !bytes.Equal(buf, want) {
		t.Fatalf("in place %x\nappended %x", buf, want)
	}
	var m Forward
	if err := m.Decode(mustFrame(t, buf), Limits{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.Credential, forwardToken) || m.Inner.Type != TypePublishBatch || m.Inner.RequestID != 41 {
		t.Fatalf("decoded %q, %v %d", m.Credential, m.Inner.Type, m.Inner.RequestID)
	}
	if ack, err := PublishAckMode(m.Inner, Limits{}); err != nil || ack != AckPerBatch {
		t.Fatalf("ack %v, %v", ack, err)
	}
}

// What a FORWARD may not carry: a credential over the token bound, bytes
// that are not one whole frame, a frame over the receiver's client limit
// for its type, a peer frame (no nesting).
func TestAForwardCarriesOneBoundedClientFrame(t *testing.T) {
	lim := Limits{FrameBytesMax: 1024, TokenBytesMax: 16}
	cases := []struct {
		name  string
		frame []byte
		code  Code
	}{
		{"credential over token_bytes_max", AppendForward(nil, 1, make([]byte, 17), forwardGet), CodeLimitExceeded},
		{"no inner frame", AppendForward(nil, 1, nil, nil), CodeMalformedFrame},
		{"half an inner frame", AppendForward(nil, 1, nil, forwardGet[:20]), CodeMalformedFrame},
		{"bytes after the inner frame", AppendForward(nil, 1, nil, append(bytes.Clone(forwardGet), 0)), CodeMalformedFrame},
		{"an inner frame over the client limit", AppendForward(nil, 1, nil,
			AppendCachePut(nil, 1, CachePut{Cache: gCache, Key: []byte("k"), Value: make([]byte, 2000)})), CodeFrameTooLarge},
		{"an inner HELLO over its own bound", AppendForward(nil, 1, nil, helloOverItsBound()), CodeFrameTooLarge},
		{"a nested FORWARD", AppendForward(nil, 1, nil, AppendForward(nil, 2, nil, forwardGet)), CodeMalformedFrame},
		{"a PEER_HELLO inside", AppendForward(nil, 1, nil, AppendPeerHello(nil, 2, PeerHello{VersionMin: 1, VersionMax: 1,
			BrokerID: []byte("b")})), CodeMalformedFrame},
		{"a credential length past the body", AppendFrame(nil, TypeForward, 0, 1, []byte{9, 0, 'x'}), CodeMalformedFrame},
	}
	for _, c := range cases {
		var m Forward
		err := m.Decode(mustFrame(t, c.frame), lim)
		if !errors.Is(err, c.code) {
			t.Errorf("%s: %v, want %v", c.name, err, c.code)
		}
	}
}

func helloOverItsBound() []byte {
	b := AppendHello(nil, 1, Hello{VersionMin: 1, VersionMax: 1})
	b = append(b, make([]byte, 600)...)
	binary.LittleEndian.PutUint32(b, uint32(len(b)-lengthFieldSize))
	return b
}

// PublishAckMode reads the ack of either binary publish frame, refuses
// every other type and a body cut before the ack.
func TestPublishAckModeReadsOnlyTheFieldsBeforeTheRecords(t *testing.T) {
	one := AppendPublish(nil, 1, gRef, AckNone, Record{Value: []byte("v")})
	if a, err := PublishAckMode(mustFrame(t, one), Limits{}); err != nil || a != AckNone {
		t.Fatalf("PUBLISH: %v %v", a, err)
	}
	f := mustFrame(t, one)
	f.Body = f.Body[:3]
	if _, err := PublishAckMode(f, Limits{}); !errors.Is(err, CodeMalformedFrame) {
		t.Fatalf("cut body: %v", err)
	}
	if _, err := PublishAckMode(mustFrame(t, forwardGet), Limits{}); !errors.Is(err, CodeMalformedFrame) {
		t.Fatalf("CACHE_GET: %v", err)
	}
}

// FuzzForwardDecode: whatever the body, Decode never panics and never
// refuses without a code; what it accepts is canonical (AppendForward of
// the credential and the inner frame's bytes is the frame itself), and the
// inner frame passes the Reader under the same limits.
func FuzzForwardDecode(f *testing.F) {
	for _, frame := range [][]byte{AppendForward(nil, 6, forwardToken, forwardPublish), AppendForward(nil, 7, nil, forwardGet)} {
		f.Add(frame[HeaderSize:])
	}
	f.Add([]byte{0xff, 0xff})
	f.Fuzz(func(t *testing.T, body []byte) {
		lim := Limits{FrameBytesMax: 1 << 16, TokenBytesMax: 64}
		fr := Frame{Type: TypeForward, RequestID: 3, Body: body}
		var m Forward
		if err := m.Decode(fr, lim); err != nil {
			checkCoded(t, err)
			return
		}
		inner := AppendFrame(nil, m.Inner.Type, m.Inner.Flags, m.Inner.RequestID, m.Inner.Body)
		if again := AppendForward(nil, 3, m.Credential, inner); !bytes.Equal(again[HeaderSize:], body) {
			t.Fatalf("not canonical:\n%x\n%x", body, again[HeaderSize:])
		}
		if _, need, err := (&Reader{Limits: lim}).Next(inner); err != nil || need != 0 {
			t.Fatalf("inner frame the Reader refuses: need %d, %v", need, err)
		}
	})
}
