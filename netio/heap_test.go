package netio

import (
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// The memory a peer can make the broker hold, measured as the process's
// live heap (the server runs in the test's process) while a hostile peer
// does its worst over loopback. The bounds asserted are the ones
// docs/operations.md gives.

// liveHeapBytes is the heap in use after two collections: the second
// empties what the first left in sync.Pools (gnet's and ours), so it is
// what is held, not what is yet to be freed.
func liveHeapBytes() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

// dialMany opens n connections and waits until the broker serves them all.
func (b *testBroker) dialMany(n int, hello bool) []*rawClient {
	b.t.Helper()
	out := make([]*rawClient, n)
	for i := range out {
		out[i] = b.dial()
		if hello {
			out[i].hello(wire.FeaturesAll, nil)
		}
	}
	waitUntil(b.t, "the connections to open", func() bool { return b.s.Metrics().ConnectionsActive.Load() >= int64(n) })
	return out
}

// sendAllBut writes frame but its last byte from a goroutine of its own:
// the broker may close the connection before it is all written.
func (c *rawClient) sendAllBut(frame []byte) {
	go func() {
		c.nc.SetWriteDeadline(time.Now().Add(waitLimit))
		_, _ = c.nc.Write(frame[:len(frame)-1])
	}()
}

// frameOf is a frame of type t, size bytes in all (a valid header, a body
// of zeros).
func frameOf(t wire.Type, size int) []byte {
	f := make([]byte, size)
	copy(f, header(uint32(size-4), t, 0, 77))
	return f
}

// holding counts the connections whose unfinished frame holds n bytes.
func (b *testBroker) holding(n int) int {
	held := 0
	for _, c := range b.s.connections() {
		onLoop(b.t, c, func() {
			if c.part.buf != nil && len(c.part.buf.b) == n {
				held++
			}
		})
	}
	return held
}

// helloBound is what n connections may hold before their handshake: a
// HELLO each, in the buffer class that holds it (12 KiB for 8,478 bytes),
// and 64 KiB for the runtime's own noise.
func helloBound(n, helloMax int) int64 {
	return int64(n*frameBufBytes(helloMax)*9/8 + 64<<10)
}

func closeAll(cs []*rawClient) {
	for _, c := range cs {
		c.nc.Close()
	}
}

// Before the handshake a frame can be a HELLO only, and a HELLO is at most
// about 8.5 KiB: a connection that declares 4 MiB is refused from its
// header, and one that sends all but the last byte of the largest HELLO
// holds that much and no more, until its handshake timeout. (Before the
// fix each of them held about 9 MiB: gnet's buffer, grown by doubling.)
func TestUnfinishedFramesBeforeTheHandshakeHoldAtMostAHello(t *testing.T) {
	b := startBroker(t)
	const n = 64
	helloMax := b.s.cfg.Limits.FrameBytesFor(wire.TypeHello)
	big := frameOf(wire.TypeHello, 4<<20)
	publish := frameOf(wire.TypePublishBatch, 4<<20)
	hello := frameOf(wire.TypeHello, helloMax)
	holders, claimers, publishers := b.dialMany(n, false), b.dialMany(n, false), b.dialMany(n, false)
	base := liveHeapBytes()
	for i := range n {
		holders[i].sendAllBut(hello)
		claimers[i].sendAllBut(big)
		publishers[i].sendAllBut(publish)
	}
	m := b.s.Metrics()
	waitUntil(t, "the claims to be refused", func() bool { return m.FramesRefused.Load() == 2*n })
	waitUntil(t, "the HELLOs to be held", func() bool { return b.holding(helloMax-1) == n })
	claimers[0].expectError(wire.CodeFrameTooLarge, 77)
	publishers[0].expectError(wire.CodeHandshakeRequired, 77)
	grown := liveHeapBytes() - base
	runtime.KeepAlive([][]byte{big, publish, hello}) // held by the writers until the broker closes
	if bound := helloBound(n, helloMax); grown > bound {
		t.Fatalf("%d connections with unfinished frames before the handshake: the heap grew %d KiB, bound %d KiB",
			3*n, grown>>10, bound>>10)
	}
	t.Logf("3 x %d connections: heap +%d KiB (bound %d KiB, the HELLOs' %d KiB)", n, grown>>10, helloBound(n, helloMax)>>10, n*helloMax>>10)
	closeAll(holders)
	closeAll(claimers)
	closeAll(publishers)
	waitUntil(t, "the connections to close", func() bool { return m.ConnectionsActive.Load() == 0 })
	if after := liveHeapBytes() - base; after > 1<<20 || m.InboundBuffered.Load() != 0 {
		t.Fatalf("after the close the heap is %d KiB over what it was with the connections idle, %d bytes still counted",
			after>>10, m.InboundBuffered.Load())
	}
}

// After the handshake (auth off: anyone) frames of up to frame_bytes_max
// are allowed, and every connection may leave one unfinished: together they
// hold at most Config.InboundBytesMax, connections that would take more
// are shed, and a well-behaved client goes on publishing meanwhile.
func TestUnfinishedFramesAfterTheHandshakeHoldAtMostTheInboundBudget(t *testing.T) {
	const budget, frameBytes, n = 8 << 20, 3 << 20, 16
	b := startBroker(t, func(c *Config) { c.InboundBytesMax = budget })
	ref := b.createStream("healthy", 1)
	if err := publishN(b.s.Addr().String(), ref, 0, 200, 10); err != nil { // the stream's memory, before the count
		t.Fatal(err)
	}
	frame := frameOf(wire.TypePublishBatch, frameBytes)
	attackers := b.dialMany(n, true)
	base := liveHeapBytes()
	for _, c := range attackers {
		c.sendAllBut(frame)
	}
	m := b.s.Metrics()
	waitUntil(t, "every attacker shed or holding its frame", func() bool {
		return int(m.ConnectionsShed.Load())+b.holding(frameBytes-1) == n
	})
	if err := publishN(b.s.Addr().String(), ref, 200, 200, 10); err != nil {
		t.Fatalf("a well-behaved publisher meanwhile: %v", err)
	}
	grown := liveHeapBytes() - base
	runtime.KeepAlive(frame)
	if bound := int64(budget + n*16<<10); grown > bound || m.InboundBuffered.Load() > budget {
		t.Fatalf("%d connections with 3 MiB unfinished: the heap grew %d KiB (bound %d KiB), %d bytes counted",
			n, grown>>10, bound>>10, m.InboundBuffered.Load())
	}
	if m.ConnectionsShed.Load() < n-budget/frameBytes {
		t.Fatalf("%d connections shed of %d", m.ConnectionsShed.Load(), n)
	}
	t.Logf("%d connections: %d shed, heap +%d KiB (budget %d KiB)", n, m.ConnectionsShed.Load(), grown>>10, budget>>10)
	closeAll(attackers)
	waitUntil(t, "the attackers to close", func() bool { return m.ConnectionsActive.Load() == 0 })
	if after := liveHeapBytes() - base; after > 1<<20 || m.InboundBuffered.Load() != 0 {
		t.Fatalf("after the close the heap is %d KiB over what it was before, %d bytes still counted", after>>10, m.InboundBuffered.Load())
	}
}

// A client that pipelines requests and never reads: the answers it leaves
// unread, in the outbox and in gnet's buffer, take at most twice the
// budget plus one frame of memory, not of bytes only (before the fix gnet
// copied them into power-of-two pieces, near twice the bytes), and that
// memory is given back when the connection closes.
func TestAClientThatNeverReadsHoldsAtMostTheOutboundCap(t *testing.T) {
	const n = 4
	b := startBroker(t, func(c *Config) {
		c.OutboundBytesMax = 2 << 20
		c.Limits.FrameBytesMax = 1 << 20
		c.sendBufferBytes = 8 << 10
	})
	hardCap := int64(2*b.s.cfg.OutboundBytesMax + b.s.cfg.Limits.FrameBytesMax)
	var pings []byte
	for i := range 2731 { // 64 KiB and one PING: gnet rounded such writes up to 128 KiB
		pings = wire.AppendPing(pings, uint64(i+1), 1)
	}
	clients := b.dialMany(n, true)
	base := liveHeapBytes()
	for _, c := range clients {
		c.nc.(*net.TCPConn).SetReadBuffer(4 << 10)
		c.pipelineUntil(b, pings, 3*hardCap/4)
	}
	grown := liveHeapBytes() - base
	if bound := n * (hardCap + 1<<20); grown > bound {
		t.Fatalf("%d clients each leaving %d KiB of answers unread: the heap grew %d KiB, bound %d KiB",
			n, 3*hardCap/4>>10, grown>>10, bound>>10)
	}
	t.Logf("%d clients at 3/4 of a %d KiB cap: heap +%d KiB", n, hardCap>>10, grown>>10)
	clients[0].pipelineUntil(b, pings, 2*hardCap) // past the cap: closed
	waitUntil(t, "the client past the cap to be closed", func() bool { return b.s.Metrics().AnswersUnread.Load() == 1 })
	closeAll(clients)
	waitUntil(t, "the clients to close", func() bool { return b.s.Metrics().ConnectionsActive.Load() == 0 })
	if after := liveHeapBytes() - base; after > 1<<20 {
		t.Fatalf("after the close the heap is %d KiB over what it was before", after>>10)
	}
}

// pipelineUntil sends pings and reads nothing until the broker holds at
// least want bytes of answers for the connection, or has closed it. It
// waits for each burst to be handled before the next, so the broker holds
// what the test says, not what the sockets still carry.
func (c *rawClient) pipelineUntil(b *testBroker, pings []byte, want int64) {
	c.t.Helper()
	var sc *conn
	waitUntil(c.t, "the connection to be known", func() bool { sc = b.connOf(c); return sc != nil })
	m := b.s.Metrics()
	for sc.out.used() < want && !sc.out.isClosed() {
		in := m.BytesIn.Load()
		c.nc.SetWriteDeadline(time.Now().Add(waitLimit))
		if _, err := c.nc.Write(pings); err != nil {
			return // closed: past the cap
		}
		waitUntil(c.t, "the pings to be handled", func() bool {
			return m.BytesIn.Load() >= in+uint64(len(pings)) || sc.out.isClosed()
		})
	}
}

// isClosed reports whether the connection is gone for the outbox.
func (o *outbox) isClosed() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.closed
}

// connOf is the server's side of a client's connection, or nil.
func (b *testBroker) connOf(c *rawClient) *conn {
	for _, sc := range b.s.connections() {
		if sc.remote == c.nc.LocalAddr().String() {
			return sc
		}
	}
	return nil
}

// A connection that once had a burst of answers, read them all, and went
// idle keeps no buffer for them past two sweeps (before the fix the outbox
// kept up to two of 256 KiB for as long as the connection stayed open:
// half a MiB a connection anyone could pin).
func TestAnIdleConnectionKeepsNoAnswerBuffers(t *testing.T) {
	clk := newFakeClock()
	b := startBroker(t, func(c *Config) { c.Now = clk.Now })
	const n, pings = 16, 10000
	var burst []byte
	for i := range pings {
		burst = wire.AppendPing(burst, uint64(i+1), 1)
	}
	answers := make([]byte, len(burst)) // a PONG is as long as its PING
	clients := b.dialMany(n, true)
	base := liveHeapBytes()
	for _, c := range clients {
		c.send(burst)
		c.nc.SetReadDeadline(time.Now().Add(waitLimit))
		if _, err := io.ReadFull(c.nc, answers); err != nil {
			t.Fatal(err)
		}
	}
	kept := liveHeapBytes() - base
	b.s.sweep(clk.advance(time.Millisecond)) // the burst was since the last sweep: kept
	b.s.sweep(clk.advance(time.Millisecond)) // nothing since: dropped
	if grown := liveHeapBytes() - base; grown > n*16<<10 {
		t.Fatalf("%d idle connections after a burst of answers: the heap grew %d KiB (%d KiB before the sweeps)", n, grown>>10, kept>>10)
	}
	t.Logf("%d connections after a %d KiB burst each: +%d KiB before the sweeps", n, len(burst)>>10, kept>>10)
	for _, c := range clients {
		c.ping() // still served
	}
}
