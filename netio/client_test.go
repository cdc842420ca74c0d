package netio

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio/wire"
)

// waitLimit bounds every wait in these tests: a broken server fails the
// test instead of hanging it.
const waitLimit = 20 * time.Second

// testBroker is a server on 127.0.0.1:0 over an in-memory engine.
type testBroker struct {
	t *testing.T
	e *engine.Engine
	s *Server
}

func startBroker(t *testing.T, mutate ...func(*Config)) *testBroker {
	t.Helper()
	e, err := engine.Open(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return startBrokerOn(t, e, mutate...)
}

func startBrokerOn(t *testing.T, e *engine.Engine, mutate ...func(*Config)) *testBroker {
	t.Helper()
	cfg := Config{Addr: "127.0.0.1:0", Engine: e, Multicore: true, EventLoops: 2, BrokerID: "b1"}
	for _, m := range mutate {
		m(&cfg)
	}
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	b := &testBroker{t: t, e: e, s: s}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		if err := s.Stop(ctx); err != nil && !errors.Is(err, ErrNotStarted) {
			t.Errorf("stop: %v", err)
		}
		e.Close()
	})
	return b
}

// createStream makes a stream through the engine (admin frames have their
// own test).
func (b *testBroker) createStream(name string, shards int) wire.StreamRef {
	b.t.Helper()
	id := engine.StreamID{Tenant: "acme", Namespace: "prod", Name: name}
	if _, err := b.e.CreateStream(id, engine.StreamConfig{Shards: shards}); err != nil {
		b.t.Fatal(err)
	}
	return wireRef(id)
}

// rawClient speaks frames over a plain TCP connection, built with wire.
type rawClient struct {
	t      testing.TB
	nc     net.Conn
	reader wire.Reader
	in     []byte
	lastID uint64
	mu     sync.Mutex // guards writes from several goroutines
}

func (b *testBroker) dial() *rawClient {
	b.t.Helper()
	return dialRaw(b.t, b.s.Addr().String())
}

func dialRaw(t testing.TB, addr string) *rawClient {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, waitLimit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawClient{t: t, nc: nc}
}

// hello handshakes with the given features and returns HELLO_OK.
func (b *testBroker) client(features wire.Features) *rawClient {
	b.t.Helper()
	c := b.dial()
	c.hello(features, nil)
	return c
}

func (c *rawClient) hello(features wire.Features, token []byte) wire.HelloOK {
	c.t.Helper()
	c.send(wire.AppendHello(nil, c.id(), wire.Hello{VersionMin: 1, VersionMax: 1, Features: features, Token: token, ClientName: []byte("test")}))
	f := c.read()
	var ok wire.HelloOK
	if f.Type != wire.TypeHelloOK {
		c.t.Fatalf("HELLO answered with %v: %v", f.Type, decodeErr(f))
	}
	if err := ok.Decode(f, wire.Limits{}); err != nil {
		c.t.Fatal(err)
	}
	return ok
}

func (c *rawClient) id() uint64 {
	c.lastID++
	return c.lastID
}

func (c *rawClient) send(frame []byte) {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nc.SetWriteDeadline(time.Now().Add(waitLimit))
	if _, err := c.nc.Write(frame); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

// read returns the next frame; its body is the client's own copy.
func (c *rawClient) read() wire.Frame {
	c.t.Helper()
	f, err := c.tryRead()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return f
}

func (c *rawClient) tryRead() (wire.Frame, error) {
	c.nc.SetReadDeadline(time.Now().Add(waitLimit))
	for {
		f, need, err := c.reader.Next(c.in)
		if err != nil {
			return wire.Frame{}, err
		}
		if need == 0 {
			f.Body = append([]byte(nil), f.Body...)
			c.in = c.in[f.Size():]
			return f, nil
		}
		buf := make([]byte, max(need, 64<<10))
		n, err := c.nc.Read(buf)
		c.in = append(c.in, buf[:n]...)
		if err != nil {
			return wire.Frame{}, err
		}
	}
}

// expectError reads an ERROR and checks its code and request id.
func (c *rawClient) expectError(code wire.Code, requestID uint64) *wire.Error {
	c.t.Helper()
	f := c.read()
	e := decodeErr(f)
	if e == nil || e.Code != code || f.RequestID != requestID {
		c.t.Fatalf("want ERROR %v for request %d, got %v (request %d): %v", code, requestID, f.Type, f.RequestID, e)
	}
	return e
}

// expectClosed reads until the broker closes the connection; no frame may
// come first.
func (c *rawClient) expectClosed() {
	c.t.Helper()
	f, err := c.tryRead()
	if err == nil {
		c.t.Fatalf("want the connection closed, got %v", f.Type)
	}
	if !errors.Is(err, io.EOF) && !isReset(err) {
		c.t.Fatalf("want the connection closed, got %v", err)
	}
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && !op.Timeout()
}

func decodeErr(f wire.Frame) *wire.Error {
	if f.Type != wire.TypeError {
		return nil
	}
	var e wire.Error
	if err := e.Decode(f, wire.Limits{}); err != nil {
		return &wire.Error{Code: wire.CodeInternal, Message: "undecodable ERROR: " + err.Error()}
	}
	return &e
}

// control sends a JSON control frame and returns the answer.
func (c *rawClient) control(m wire.Control) wire.Frame {
	c.t.Helper()
	id := c.id()
	c.send(wire.AppendControl(nil, id, m))
	f := c.read()
	if f.RequestID != id {
		c.t.Fatalf("answer to request %d carries %d", id, f.RequestID)
	}
	return f
}

func decodeControl[T any, P interface {
	*T
	wire.Control
}](t testing.TB, f wire.Frame) *T {
	t.Helper()
	m := P(new(T))
	if f.Type != m.FrameType() {
		t.Fatalf("want %v, got %v: %v", m.FrameType(), f.Type, decodeErr(f))
	}
	if err := wire.DecodeControl(f, wire.Limits{}, m); err != nil {
		t.Fatal(err)
	}
	return (*T)(m)
}

// ping proves the connection is alive and everything sent before it was
// handled: frames before the PONG are returned.
func (c *rawClient) ping() []wire.Frame {
	c.t.Helper()
	id := c.id()
	c.send(wire.AppendPing(nil, id, 42))
	var before []wire.Frame
	for {
		f := c.read()
		if f.Type == wire.TypePong && f.RequestID == id {
			return before
		}
		before = append(before, f)
	}
}

// publishAck reads a PUBLISH_ACK for the request.
func ackOf(t testing.TB, f wire.Frame) []wire.AckRun {
	t.Helper()
	if f.Type != wire.TypePublishAck {
		t.Fatalf("want PUBLISH_ACK, got %v: %v", f.Type, decodeErr(f))
	}
	var a wire.PublishAck
	if err := a.Decode(f, wire.Limits{}); err != nil {
		t.Fatal(err)
	}
	runs := make([]wire.AckRun, a.Len())
	for i := range runs {
		runs[i] = a.Run(i)
	}
	return runs
}

// events reads EVENT_BATCH frames until it holds n events, failing on any
// other frame.
func (c *rawClient) events(n int) []wire.Event {
	c.t.Helper()
	var out []wire.Event
	for len(out) < n {
		f := c.read()
		if f.Type != wire.TypeEventBatch {
			c.t.Fatalf("want EVENT_BATCH after %d events, got %v: %v", len(out), f.Type, decodeErr(f))
		}
		out = appendBatch(c.t, out, f)
	}
	return out
}

func appendBatch(t testing.TB, out []wire.Event, f wire.Frame) []wire.Event {
	t.Helper()
	var b wire.EventBatch
	if err := b.Decode(f, wire.Limits{}); err != nil {
		t.Fatal(err)
	}
	for it := b.Events(); it.Next(); {
		out = append(out, it.Event())
	}
	return out
}

// waitUntil polls cond until it holds, for state only the server can see.
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.After(waitLimit)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func value(i int) []byte {
	return []byte{byte(i), byte(i >> 8), byte(i >> 16), 'v'}
}
