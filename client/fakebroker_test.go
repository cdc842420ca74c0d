package client

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// fakeBroker is a net.Listener speaking wire frames, for the client's own
// logic: the test decides how each request is answered (or not), so
// pipelining, error mapping, retries and reconnects can be driven exactly.
type fakeBroker struct {
	t        *testing.T
	ln       net.Listener
	features wire.Features
	helloOK  wire.HelloOK
	// refuse, when set, answers HELLO with this error and closes.
	refuse *wire.Error
	// handle answers one request frame; f aliases the read buffer and is
	// valid only during the call. It runs on the connection's goroutine.
	handle func(fc *fakeConn, f wire.Frame)

	// mute: answer no PING (a broker gone silent).
	mute atomic.Bool
	// shutting: how many of the next HELLOs are refused shutting_down (a
	// broker on its way down, which another attempt may find up).
	shutting atomic.Int64

	mu     sync.Mutex
	conns  []*fakeConn
	hellos []wire.Hello // copies
	seen   chan wire.Frame
}

// fakeConn is one client connection as the fake broker sees it.
type fakeConn struct {
	b        *fakeBroker
	nc       net.Conn
	features wire.Features

	wmu sync.Mutex
	out []byte

	done chan struct{} // closed when the connection is over
}

func newFakeBroker(t *testing.T, handle func(fc *fakeConn, f wire.Frame)) *fakeBroker {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &fakeBroker{t: t, ln: ln, features: wire.FeaturesAll, handle: handle,
		helloOK: wire.HelloOK{Version: wire.ProtocolVersion, BrokerID: []byte("fake-1")}}
	t.Cleanup(b.close)
	go b.accept()
	return b
}

func (b *fakeBroker) addr() string { return b.ln.Addr().String() }

func (b *fakeBroker) close() {
	_ = b.ln.Close()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, fc := range b.conns {
		_ = fc.nc.Close()
	}
}

func (b *fakeBroker) accept() {
	for {
		nc, err := b.ln.Accept()
		if err != nil {
			return
		}
		fc := &fakeConn{b: b, nc: nc, done: make(chan struct{})}
		b.mu.Lock()
		b.conns = append(b.conns, fc)
		b.mu.Unlock()
		go fc.serve()
	}
}

// connCount is the number of connections accepted so far.
func (b *fakeBroker) connCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.conns)
}

func (b *fakeBroker) lastHello() wire.Hello {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.hellos[len(b.hellos)-1]
}

func (fc *fakeConn) serve() {
	defer close(fc.done)
	defer fc.nc.Close()
	r := wire.Reader{}
	buf := make([]byte, 64<<10)
	start, end := 0, 0
	handshook := false
	for {
		f, need, err := r.Next(buf[start:end])
		if err != nil {
			return
		}
		if need > 0 {
			buf, start, end = makeRoom(buf, start, end, need)
			n, err := fc.nc.Read(buf[end:])
			end += n
			if err != nil {
				return
			}
			continue
		}
		if !handshook {
			if !fc.hello(f) {
				return
			}
			handshook = true
		} else if f.Type == wire.TypePing || f.Type == wire.TypePong {
			fc.b.record(f)
			if f.Type == wire.TypePing && !fc.b.mute.Load() {
				var p wire.Ping
				_ = p.Decode(f, wire.Limits{})
				fc.sendWith(func(dst []byte) []byte { return wire.AppendPong(dst, f.RequestID, p.Payload) })
			}
		} else {
			fc.b.record(f)
			if fc.b.handle != nil {
				fc.b.handle(fc, f)
			}
		}
		start += f.Size()
	}
}

// record passes a copy of f to whoever watches b.seen.
func (b *fakeBroker) record(f wire.Frame) {
	b.mu.Lock()
	ch := b.seen
	b.mu.Unlock()
	if ch != nil {
		f.Body = append([]byte(nil), f.Body...)
		ch <- f
	}
}

// watch makes every later request frame (pings included) arrive on the
// returned channel; the test must keep reading it.
func (b *fakeBroker) watch(n int) <-chan wire.Frame {
	ch := make(chan wire.Frame, n)
	b.mu.Lock()
	b.seen = ch
	b.mu.Unlock()
	return ch
}

func (fc *fakeConn) hello(f wire.Frame) bool {
	var h wire.Hello
	if err := h.Decode(f, wire.Limits{}); err != nil {
		return false
	}
	h.Token = append([]byte(nil), h.Token...)
	h.ClientName = append([]byte(nil), h.ClientName...)
	b := fc.b
	b.mu.Lock()
	b.hellos = append(b.hellos, h)
	b.mu.Unlock()
	if b.refuse != nil {
		fc.sendWith(func(dst []byte) []byte { return wire.AppendError(dst, 0, b.refuse) })
		return false
	}
	if n := b.shutting.Load(); n > 0 && b.shutting.CompareAndSwap(n, n-1) {
		fc.sendWith(func(dst []byte) []byte {
			return wire.AppendError(dst, 0, &wire.Error{Code: wire.CodeShuttingDown, Message: "going"})
		})
		return false
	}
	ok := b.helloOK
	ok.Features = h.Features & b.features
	fc.features = ok.Features
	fc.sendWith(func(dst []byte) []byte { return wire.AppendHelloOK(dst, 0, ok) })
	return true
}

// sendWith appends one or more frames and writes them at once.
func (fc *fakeConn) sendWith(enc func(dst []byte) []byte) {
	fc.wmu.Lock()
	defer fc.wmu.Unlock()
	fc.out = enc(fc.out[:0])
	_, _ = fc.nc.Write(fc.out)
}

func (fc *fakeConn) ack(id uint64, runs ...wire.AckRun) {
	fc.sendWith(func(dst []byte) []byte { return wire.AppendPublishAck(dst, id, runs...) })
}

func (fc *fakeConn) fail(id uint64, code wire.Code, msg string, d wire.Details) {
	fc.sendWith(func(dst []byte) []byte {
		return wire.AppendError(dst, id, &wire.Error{Code: code, Message: msg, Details: d})
	})
}

// ackAll answers every publish with consecutive offsets on shard 0, or on
// the shard a record's first key byte names.
type sequencer struct {
	mu   sync.Mutex
	next map[uint32]uint64
}

func (s *sequencer) take(shard uint32, n uint32) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next == nil {
		s.next = map[uint32]uint64{}
	}
	first := s.next[shard]
	s.next[shard] += uint64(n)
	return first
}

// ackingHandler acks each publish per batch on shard 0 with consecutive
// offsets, and answers what else is sent with OK.
func ackingHandler() func(fc *fakeConn, f wire.Frame) {
	var seq sequencer
	var p wire.Publish
	return func(fc *fakeConn, f wire.Frame) {
		switch f.Type {
		case wire.TypePublish, wire.TypePublishBatch, wire.TypePublishJSON:
			if err := p.Decode(f, wire.Limits{}); err != nil {
				fc.fail(f.RequestID, wire.CodeMalformedFrame, err.Error(), wire.Details{})
				return
			}
			if p.Ack == wire.AckNone {
				return
			}
			fc.ack(f.RequestID, wire.AckRun{Shard: 0, FirstOffset: seq.take(0, uint32(p.Count)), Count: uint32(p.Count)})
		default:
			fc.sendWith(func(dst []byte) []byte { return wire.AppendOK(dst, f.RequestID) })
		}
	}
}

func dialFake(t *testing.T, b *fakeBroker, opts ...Option) *Client {
	t.Helper()
	c, err := Dial(testCtx(t), b.addr(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// testCtx bounds a test's waits: a hang fails the test instead of the run.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// next takes the next frame seen by the broker, failing the test after a
// deadline.
func next(t *testing.T, ch <-chan wire.Frame) wire.Frame {
	t.Helper()
	select {
	case f := <-ch:
		return f
	case <-time.After(10 * time.Second):
		t.Fatal("the broker saw no frame in time")
	}
	return wire.Frame{}
}

var testStream = Stream{Tenant: "acme", Namespace: "prod", Name: "orders"}

var errTest = errors.New("test error")
