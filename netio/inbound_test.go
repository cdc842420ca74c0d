package netio

import (
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio/wire"
)

// unfinishedBytes is how many bytes of a frame the connection holds.
func unfinishedBytes(t testing.TB, c *conn) int {
	n := 0
	onLoop(t.(*testing.T), c, func() {
		if c.part.buf != nil {
			n = len(c.part.buf.b)
		}
	})
	return n
}

// trickle sends frame[from:to] and waits until the broker holds it.
func (c *rawClient) trickle(t *testing.T, sc *conn, frame []byte, from, to int) {
	t.Helper()
	c.send(frame[from:to])
	waitUntil(t, "the bytes to arrive", func() bool { return unfinishedBytes(t, sc) == to })
}

// A frame trickled in a byte at a time is closed frame_timeout once it is
// not whole FrameTimeout after its first byte, however often bytes come
// (before the fix every byte reset the idle timeout: it never closed).
func TestAFrameTrickledInIsClosedAtItsDeadline(t *testing.T) {
	clk := newFakeClock()
	b := startBroker(t, func(c *Config) { c.Now = clk.Now; c.IdleTimeout = time.Minute; c.FrameTimeout = 30 * time.Second })
	c := b.client(wire.FeaturesAll)
	sc := b.connOf(c)
	frame := frameOf(wire.TypePublishBatch, 1000)
	for i := range 3 {
		c.trickle(t, sc, frame, i, i+1)
		b.s.sweep(clk.advance(10 * time.Second))
	}
	c.expectError(wire.CodeFrameTimeout, 0)
	c.expectClosed()
	if n := b.s.Metrics().FrameTimeouts.Load(); n != 1 {
		t.Fatalf("%d frame timeouts counted", n)
	}
}

// A frame that arrives whole in time, though slowly, is served, and the
// connection is active from it.
func TestASlowFrameWithinItsDeadlineIsServed(t *testing.T) {
	clk := newFakeClock()
	b := startBroker(t, func(c *Config) { c.Now = clk.Now; c.IdleTimeout = 30 * time.Second; c.FrameTimeout = 30 * time.Second })
	c := b.client(wire.FeaturesAll)
	sc := b.connOf(c)
	ping := wire.AppendPing(nil, 5, 9)
	c.trickle(t, sc, ping, 0, 10)
	b.s.sweep(clk.advance(29 * time.Second)) // idle since the handshake, but a frame is arriving
	c.send(ping[10:])
	if f := c.read(); f.Type != wire.TypePong || f.RequestID != 5 {
		t.Fatalf("answered %v", f.Type)
	}
	b.s.sweep(clk.advance(29 * time.Second)) // active from the PING
	c.ping()
}

// With no frame deadline, trickled bytes still do not keep a connection:
// only whole frames are activity, so it is idle from its last one.
func TestTrickledBytesAreNotActivity(t *testing.T) {
	clk := newFakeClock()
	b := startBroker(t, func(c *Config) { c.Now = clk.Now; c.IdleTimeout = time.Minute; c.FrameTimeout = -1 })
	c := b.client(wire.FeaturesAll)
	sc := b.connOf(c)
	c.ping() // active now
	frame := frameOf(wire.TypePublishBatch, 1000)
	for i := range 2 {
		b.s.sweep(clk.advance(20 * time.Second))
		c.trickle(t, sc, frame, i, i+1)
	}
	b.s.sweep(clk.advance(20 * time.Second)) // 60 s after the PING, 20 s after the last byte
	c.expectError(wire.CodeIdleTimeout, 0)
	c.expectClosed()
}

// A frame before HELLO is refused from its header: the broker does not
// wait for (and hold) a body that could only be refused.
func TestAFrameBeforeHelloIsRefusedFromItsHeader(t *testing.T) {
	b := startBroker(t)
	c := b.dial()
	c.send(header(4<<20-4, wire.TypePublishBatch, 0, 31))
	c.expectError(wire.CodeHandshakeRequired, 31)
	c.expectClosed()
	big := b.dial()
	big.send(header(4<<20-4, wire.TypeHello, 0, 32))
	e := big.expectError(wire.CodeFrameTooLarge, 32)
	if e.Details.LimitValue != uint64(b.s.cfg.Limits.FrameBytesFor(wire.TypeHello)) {
		t.Fatalf("details %+v", e.Details)
	}
	big.expectClosed()
}

// A HELLO that arrives a byte at a time, across many reads, is assembled
// and answered; its buffer goes back to the budget.
func TestAHelloInPiecesIsAnswered(t *testing.T) {
	b := startBroker(t)
	c := b.dial()
	waitUntil(t, "the connection to open", func() bool { return b.s.Metrics().ConnectionsActive.Load() == 1 })
	sc := b.connOf(c)
	hello := wire.AppendHello(nil, 1, wire.Hello{VersionMin: 1, VersionMax: 1, Features: wire.FeaturesAll, Token: make([]byte, 5000)})
	for _, cut := range []int{1, 3, 4, 15, 16, 17, 4100, 4300} {
		c.trickle(t, sc, hello, unfinishedBytes(t, sc), cut)
	}
	c.send(hello[4300:])
	if f := c.read(); f.Type != wire.TypeHelloOK {
		t.Fatalf("HELLO answered with %v: %v", f.Type, decodeErr(f))
	}
	c.ping()
	if n := b.s.Metrics().InboundBuffered.Load(); n != 0 {
		t.Fatalf("%d bytes still counted for unfinished frames", n)
	}
}

// A frame cut across reads, as a pipelining publisher's reads end in one,
// is taken out of the transport to its last byte at every read (nothing
// stays in gnet's buffer between reads), and is assembled without
// allocating once the pools hold its buffers.
func TestFramesAcrossReadsLeaveNothingInTheTransportAndAllocateNothing(t *testing.T) {
	s, e := loopServer(t)
	id := engine.StreamID{Tenant: "acme", Namespace: "prod", Name: "cut"}
	if _, err := e.CreateStream(id, engine.StreamConfig{Shards: 1}); err != nil {
		t.Fatal(err)
	}
	fc := &loopConn{}
	c := newConn(s, fc)
	fc.in = wire.AppendHello(nil, 1, wire.Hello{VersionMin: 1, VersionMax: 1, Features: wire.FeaturesAll})
	c.traffic()
	fc.out = fc.out[:0]
	recs := make([]wire.Record, 64)
	for i := range recs {
		recs[i] = wire.Record{Value: make([]byte, 1024)}
	}
	frame := wire.AppendPublishBatch(nil, 2, wireRef(id), wire.AckPerBatch, recs)
	publish := func() {
		for _, piece := range [][]byte{frame[:10], frame[10 : 40<<10], frame[40<<10:]} {
			fc.in = piece
			c.traffic()
			if len(fc.in) != 0 {
				t.Fatalf("%d bytes left in the transport", len(fc.in))
			}
		}
		if f, _, err := (&wire.Reader{}).Next(fc.out); err != nil || f.Type != wire.TypePublishAck {
			t.Fatalf("answered %v: %v", f.Type, err)
		}
		fc.out = fc.out[:0]
	}
	for range 100 {
		publish()
	}
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	if a := testing.AllocsPerRun(200, publish); a > 0 {
		t.Errorf("%.2f allocations per publish across three reads", a)
	}
}
