package peer

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/panjf2000/gnet/v2"

	"github.com/felixbroker/felix/netio/wire"
)

// fakeGnet is the part of gnet.Conn a served connection uses, in memory:
// the bytes received and not consumed, and what was written. A method it
// does not fake panics (the embedded interface is nil).
type fakeGnet struct {
	gnet.Conn
	in     []byte
	out    []byte
	closed bool
}

func (f *fakeGnet) InboundBuffered() int  { return len(f.in) }
func (f *fakeGnet) OutboundBuffered() int { return 0 }
func (f *fakeGnet) Fd() int               { return -1 }
func (f *fakeGnet) Close() error          { f.closed = true; return nil }

func (f *fakeGnet) Peek(n int) ([]byte, error) { return f.in[:n], nil }

func (f *fakeGnet) Discard(n int) (int, error) {
	f.in = f.in[n:]
	return n, nil
}

func (f *fakeGnet) Write(b []byte) (int, error) {
	f.out = append(f.out, b...)
	return len(b), nil
}

func (f *fakeGnet) AsyncWrite(b []byte, cb gnet.AsyncCallback) error {
	_, _ = f.Write(b)
	return cb(f, nil)
}

// serveStream feeds stream to a served connection in reads of chunk
// bytes and reports every frame its handler saw, and how it ended.
func serveStream(t *testing.T, stream []byte, chunk int) (seen []string, refused bool) {
	cfg, err := Config{ID: "b", Addr: "x", Resolve: func(string) (string, error) { return "", nil },
		FrameBytesMax: 64 << 10}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	tr := &TCP{cfg: cfg, me: cfg.speaks(), lim: wire.Limits{FrameBytesMax: cfg.FrameBytesMax}}
	tr.srv = newServer(tr)
	tr.Handle(HandlerFunc(func(from string, req wire.Frame, r Reply) {
		seen = append(seen, fmt.Sprintf("%s %v %d %x", from, req.Type, req.RequestID, req.Body))
		_ = r.Answer(wire.AppendOK(nil, 0))
	}))
	gc := &fakeGnet{}
	sc := newServerConn(tr, gc)
	for len(stream) > 0 && !gc.closed {
		n := min(chunk, len(stream))
		gc.in = append(gc.in, stream[:n]...)
		stream = stream[n:]
		sc.traffic()
		if len(gc.in) != 0 {
			t.Fatalf("a read left %d bytes in gnet's buffer", len(gc.in))
		}
	}
	return seen, gc.closed
}

// FuzzServedConnectionFraming: however a byte stream is cut into reads,
// a served connection hands its handler the same frames, and refuses it
// at the same point, as when it arrives in one read; it never leaves
// bytes in gnet's buffer, and never panics.
func FuzzServedConnectionFraming(f *testing.F) {
	hello := wire.AppendPeerHello(nil, 1, wire.PeerHello{VersionMin: 1, VersionMax: 1, Features: wire.FeaturesAll, BrokerID: []byte("a")})
	f.Add(bytes.Clone(hello), uint16(1))
	f.Add(append(bytes.Clone(hello), pub([]byte("v"))...), uint16(7))
	f.Add(append(append(bytes.Clone(hello), pub(make([]byte, 40<<10))...), wire.AppendPing(nil, 3, 9)...), uint16(1000))
	f.Add(append(bytes.Clone(hello), wire.AppendHello(nil, 2, wire.Hello{VersionMin: 1, VersionMax: 1})...), uint16(5))
	f.Add(pub([]byte("no hello first")), uint16(3))
	f.Add(append(bytes.Clone(hello), 0xff, 0xff, 0xff, 0x7f), uint16(2))
	f.Fuzz(func(t *testing.T, stream []byte, chunk uint16) {
		whole, refusedWhole := serveStream(t, stream, len(stream)+1)
		cut, refusedCut := serveStream(t, stream, int(chunk%4096)+1)
		if fmt.Sprint(whole) != fmt.Sprint(cut) || refusedWhole != refusedCut {
			t.Fatalf("in one read: %v (refused %v)\nin reads of %d: %v (refused %v)",
				whole, refusedWhole, int(chunk%4096)+1, cut, refusedCut)
		}
	})
}
