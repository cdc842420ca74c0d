package peer

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// pair starts brokers a and b on loopback, each resolving the other
// directly.
func pair(t *testing.T, hook func(*Config)) (a, b *TCP) {
	t.Helper()
	var book sync.Map
	resolve := func(id string) (string, error) {
		if v, ok := book.Load(id); ok {
			return v.(string), nil
		}
		return "", errors.New("no such broker")
	}
	cfgA, cfgB := Config{ID: "a", Resolve: resolve}, Config{ID: "b", Resolve: resolve}
	if hook != nil {
		hook(&cfgA)
	}
	a, b = listenTest(t, cfgA), listenTest(t, cfgB)
	book.Store("a", a.Addr().String())
	book.Store("b", b.Addr().String())
	return a, b
}

func (t *TCP) linkTo(peer string) *link {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.links[peer]
}

func TestTCPBatchesTheRequestsThatGatherWhileItDials(t *testing.T) {
	release := make(chan struct{})
	a, b := pair(t, func(c *Config) {
		c.dial = func(ctx context.Context, addr string) (net.Conn, error) {
			<-release
			return (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		}
	})
	b.Handle(echo)
	const n = 100
	out := make(chan outcome, n)
	for i := range n {
		if err := a.Send(asyncCall("b", pub([]byte(strconv.Itoa(i))), 0, out)); err != nil {
			t.Fatal(err)
		}
	}
	close(release)
	for range n {
		if o := receive(t, out, eventWait); o.err != nil {
			t.Fatal(o.err)
		}
	}
	if writes, frames := a.linkTo("b").stats(); writes != 1 || frames != n {
		t.Fatalf("%d requests in %d writes, want one", frames, writes)
	}
}

// gatedConn blocks writes while armed, until released.
type gatedConn struct {
	net.Conn
	armed   atomic.Bool
	blocked chan struct{}
	release chan struct{}
}

func (g *gatedConn) Write(b []byte) (int, error) {
	if g.armed.Load() {
		g.blocked <- struct{}{}
		<-g.release
	}
	return g.Conn.Write(b)
}

func TestTCPFailsWrittenRequestsAsUnknownAndBufferedOnesAsNotSent(t *testing.T) {
	g := &gatedConn{blocked: make(chan struct{}, 1), release: make(chan struct{})}
	a, b := pair(t, func(c *Config) {
		c.dial = func(ctx context.Context, addr string) (net.Conn, error) {
			nc, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
			g.Conn = nc
			return g, err
		}
	})
	hd := newHeld()
	b.Handle(hd)
	out := make(chan outcome, 8)
	send := func(v string) {
		t.Helper()
		if err := a.Send(asyncCall("b", pub([]byte(v)), 0, out)); err != nil {
			t.Fatal(err)
		}
	}
	send("written 1")
	send("written 2")
	hd.await(t, 2, eventWait)
	g.armed.Store(true)
	send("in the write") // taken by the flusher, whose write blocks
	<-g.blocked
	send("buffered 1")
	send("buffered 2")
	_ = g.Conn.Close() // the connection fails under them: its reader fails them first
	defer close(g.release)
	sent, notSent := 0, 0
	for range 5 {
		o := receive(t, out, eventWait)
		switch {
		case errors.Is(o.err, ErrOutcomeUnknown):
			sent++
		case errors.Is(o.err, ErrNotSent):
			notSent++
		}
		if !errors.Is(o.err, ErrConnectionLost) {
			t.Fatalf("%v: not a lost connection", o.err)
		}
	}
	if sent != 3 || notSent != 2 {
		t.Fatalf("%d outcome unknown, %d not sent; want 3 and 2", sent, notSent)
	}
}

func TestTCPRedialsAfterThePeerRestarts(t *testing.T) {
	a, b := pair(t, nil)
	b.Handle(echo)
	ctx, cancel := within(eventWait)
	defer cancel()
	if _, err := a.Call(ctx, "b", pub([]byte("first")), nil); err != nil {
		t.Fatal(err)
	}
	addr := b.Addr().String()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := a.Call(ctx, "b", pub([]byte("while b is down")), nil)
	if err == nil {
		t.Fatal("a call to a stopped broker succeeded")
	}
	b2 := listenTest(t, Config{ID: "b", Addr: addr, Resolve: func(string) (string, error) { return "", errors.New("unused") }})
	b2.Handle(echo)
	if ans, err := a.Call(ctx, "b", pub([]byte("again")), nil); err != nil || string(valueOf(t, ans)) != "again" {
		t.Fatalf("after the restart: %v", err)
	}
}

func TestTCPBackoffFailsRequestsAtOnceAndDialsOnceItIsOver(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	_ = ln.Close() // nothing listens there now
	var dials atomic.Int32
	a := listenTest(t, Config{ID: "a", Resolve: func(string) (string, error) { return dead, nil },
		BackoffBase: time.Hour, jitter: func() float64 { return 0.5 },
		dial: func(ctx context.Context, addr string) (net.Conn, error) {
			dials.Add(1)
			return (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		}})
	ctx, cancel := within(eventWait)
	defer cancel()
	_, err = a.Call(ctx, "b", pub([]byte("v")), nil)
	wantErr(t, err, ErrNotSent, ErrUnreachable)
	start := time.Now()
	_, err = a.Call(ctx, "b", pub([]byte("v")), nil)
	wantErr(t, err, ErrNotSent, ErrUnreachable)
	if dials.Load() != 1 || time.Since(start) > time.Second {
		t.Fatalf("%d dials; the second call took %v", dials.Load(), time.Since(start))
	}
	l := a.linkTo("b")
	l.core.mu.Lock()
	l.retryAt = time.Now() // the backoff is over
	l.core.mu.Unlock()
	if _, err = a.Call(ctx, "b", pub([]byte("v")), nil); dials.Load() != 2 {
		t.Fatalf("%d dials after the backoff, err %v", dials.Load(), err)
	}
}

func TestBackoffIsFullJitterAndBounded(t *testing.T) {
	base, ceiling := 20*time.Millisecond, 2*time.Second
	for _, c := range []struct {
		attempt int
		u       float64
		want    time.Duration
	}{
		{0, 0.9, 0}, {1, 0, 0}, {1, 0.5, 10 * time.Millisecond}, {2, 0.5, 20 * time.Millisecond},
		{5, 1 - 1e-12, 320 * time.Millisecond}, {8, 0.5, time.Second}, {63, 0.5, time.Second}, {1 << 30, 0.5, time.Second},
	} {
		got := backoff(c.attempt, base, ceiling, c.u)
		if diff := got - c.want; diff > time.Microsecond || diff < -time.Microsecond {
			t.Errorf("attempt %d, u %v: %v, want %v", c.attempt, c.u, got, c.want)
		}
	}
}

// rawPeer dials addr and handshakes as broker "raw" by hand.
func rawPeer(t *testing.T, addr string) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(eventWait))
	hello := wire.PeerHello{VersionMin: 1, VersionMax: 1, Features: wire.FeaturesAll, BrokerID: []byte("raw")}
	if _, err := nc.Write(wire.AppendPeerHello(nil, 1, hello)); err != nil {
		t.Fatal(err)
	}
	if f := readRaw(t, nc); f.Type != wire.TypePeerHelloOK {
		t.Fatalf("handshake answered %v", f.Type)
	}
	return nc
}

func readRaw(t *testing.T, nc net.Conn) wire.Frame {
	t.Helper()
	f, _, err := readFrame(nc, wire.Limits{FrameBytesMax: DefaultFrameBytesMax})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// wantRefusedAndClosed reads an ERROR with code, then the end of the
// connection.
func wantRefusedAndClosed(t *testing.T, nc net.Conn, code wire.Code) {
	t.Helper()
	f := readRaw(t, nc)
	var e wire.Error
	if f.Type != wire.TypeError || e.Decode(f, wire.Limits{}) != nil || e.Code != code {
		t.Fatalf("answered %v %+v, want ERROR %v", f.Type, e, code)
	}
	if n, err := nc.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Fatalf("the connection stays open after the refusal: %d, %v", n, err)
	}
}

func TestTCPListenerRefusesAnOversizedFrameFromItsHeaderAlone(t *testing.T) {
	_, b := pair(t, nil)
	hd := newHeld()
	b.Handle(hd)
	nc := rawPeer(t, b.Addr().String())
	header := pub(nil)[:wire.HeaderSize]
	header[0], header[1], header[2], header[3] = 0, 0, 0, 0x40 // a 1 GiB frame
	if _, err := nc.Write(header); err != nil {
		t.Fatal(err)
	}
	wantRefusedAndClosed(t, nc, wire.CodeFrameTooLarge)
}

func TestTCPListenerRefusesAClientHello(t *testing.T) {
	_, b := pair(t, nil)
	nc, err := net.Dial("tcp", b.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(eventWait))
	hello := wire.AppendHello(nil, 1, wire.Hello{VersionMin: 1, VersionMax: 1, ClientName: []byte("felix-go")})
	if _, err := nc.Write(hello[:wire.HeaderSize]); err != nil { // its header is enough
		t.Fatal(err)
	}
	wantRefusedAndClosed(t, nc, wire.CodeHandshakeRequired)
}

func TestTCPListenerReadsAFrameThatArrivesAByteAtATime(t *testing.T) {
	_, b := pair(t, nil)
	b.Handle(echo)
	nc := rawPeer(t, b.Addr().String())
	req := pub(bytes.Repeat([]byte("x"), 300))
	req[8] = 42 // request id 42
	for i := range req {
		if _, err := nc.Write(req[i : i+1]); err != nil {
			t.Fatal(err)
		}
	}
	f := readRaw(t, nc)
	if f.RequestID != 42 || len(valueOf(t, f)) != 300 {
		t.Fatalf("answer %v, request %d", f.Type, f.RequestID)
	}
}

func TestTCPRefusesAnAddressServedByAnotherBroker(t *testing.T) {
	c := listenTest(t, Config{ID: "c", Resolve: func(string) (string, error) { return "", errors.New("unused") }})
	a := listenTest(t, Config{ID: "a", Resolve: func(string) (string, error) { return c.Addr().String(), nil }})
	c.Handle(echo)
	ctx, cancel := within(eventWait)
	defer cancel()
	_, err := a.Call(ctx, "b", pub([]byte("v")), nil)
	wantErr(t, err, ErrNotSent, ErrRefused)
}

func TestTCPAnswersAPing(t *testing.T) {
	a, _ := pair(t, nil)
	ctx, cancel := within(eventWait)
	defer cancel()
	ans, err := a.Call(ctx, "b", wire.AppendPing(nil, 0, 77), nil)
	var p wire.Ping
	if err != nil || ans.Type != wire.TypePong || p.Decode(ans, wire.Limits{}) != nil || p.Payload != 77 {
		t.Fatalf("answer %v, err %v", ans.Type, err)
	}
}

func TestTCPADialThatIsNeverAnsweredFailsWithinTheHandshakeTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	held := make(chan net.Conn, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			held <- c // accepted, never answered
		}
	}()
	a := listenTest(t, Config{ID: "a", HandshakeTimeout: 100 * time.Millisecond,
		Resolve: func(string) (string, error) { return ln.Addr().String(), nil }})
	ctx, cancel := within(eventWait)
	defer cancel()
	start := time.Now()
	_, err = a.Call(ctx, "b", pub([]byte("v")), nil)
	wantErr(t, err, ErrNotSent, ErrUnreachable)
	if took := time.Since(start); took < 100*time.Millisecond || took > eventWait/2 {
		t.Fatalf("failed after %v", took)
	}
	(<-held).Close()
}

func TestTCPListenerClosesAConnectionThatNeverHandshakes(t *testing.T) {
	b := listenTest(t, Config{ID: "b", HandshakeTimeout: 100 * time.Millisecond,
		Resolve: func(string) (string, error) { return "", errors.New("unused") }})
	start := time.Now()
	nc, err := net.Dial("tcp", b.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetReadDeadline(time.Now().Add(eventWait))
	if n, err := nc.Read(make([]byte, 1)); n != 0 || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read %d bytes, %v: still open", n, err)
	}
	if took := time.Since(start); took < 100*time.Millisecond {
		t.Fatalf("closed after %v, before its handshake timeout", took)
	}
}
