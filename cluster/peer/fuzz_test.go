package peer

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// fakeSock is a served connection's socket in memory: its reads hand out
// the stream in pieces of chunk bytes at most, and what is written is
// kept.
type fakeSock struct {
	in     []byte
	chunk  int
	out    []byte
	closed bool
}

func (f *fakeSock) Read(b []byte) (int, error) {
	if len(f.in) == 0 {
		return 0, io.EOF
	}
	n := copy(b[:min(len(b), f.chunk)], f.in)
	f.in = f.in[n:]
	return n, nil
}

func (f *fakeSock) SetReadDeadline(time.Time) error { return nil }

func (f *fakeSock) tryWrite(b []byte) (int, error) {
	f.out = append(f.out, b...)
	return len(b), nil
}

func (f *fakeSock) write(b []byte) (int, error) {
	f.out = append(f.out, b...)
	return len(b), nil
}

func (f *fakeSock) close() { f.closed = true }

// serveStream has a served connection read stream in reads of chunk
// bytes at most and reports every frame its handler saw, and whether it
// was refused (and so closed).
func serveStream(t *testing.T, stream []byte, chunk int) (seen []string, refused bool) {
	cfg, err := Config{ID: "b", Addr: "x", Resolve: func(string) (string, error) { return "", nil },
		FrameBytesMax: 64 << 10}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	tr := &TCP{cfg: cfg, me: cfg.speaks(), lim: wire.Limits{FrameBytesMax: cfg.FrameBytesMax}}
	tr.Handle(HandlerFunc(func(from string, req wire.Frame, r Reply) {
		seen = append(seen, fmt.Sprintf("%s %v %d %x", from, req.Type, req.RequestID, req.Body))
		_ = r.Answer(wire.AppendOK(nil, 0))
	}))
	fs := &fakeSock{in: stream, chunk: chunk}
	sc := newServerConn(tr, fs)
	if err := sc.readFrames(fs); (err == nil) != sc.refusing {
		t.Fatalf("the reads ended with %v, refused %v", err, sc.refusing)
	}
	if sc.refusing != fs.closed {
		t.Fatalf("refused %v, closed %v", sc.refusing, fs.closed)
	}
	return seen, fs.closed
}

// FuzzServedConnectionFraming: however a byte stream is cut into reads,
// a served connection hands its handler the same frames, and refuses it
// at the same point, as when it arrives in one read; a refusal closes
// it, and it never panics.
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
