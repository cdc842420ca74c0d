package netio

import (
	"bufio"
	"encoding/binary"
	"net"
	"testing"

	"github.com/felixbroker/felix/netio/wire"
)

// A publish forwarded over loopback peer.TCP allocates nothing in steady
// state, on either broker: the ingress (decoding, the engine's split, the
// FORWARD, the call, the leader's ack read by the link's reader and the
// client's PUBLISH_ACK written from there) and the leader (the served
// connection's read, the relay connection's traffic, the memory log, the
// answer written at the end of the read). Both brokers and the client are
// in this process, so every goroutine's allocations count: a single
// record, and a batch of 64.
func TestAForwardedPublishOverTCPAllocatesNothingOnEitherBroker(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	ingress, _, ref := benchForwardingPair(t)
	c := dialClientAt(t, ingress.Addr().String())
	for _, batch := range []int{1, 64} {
		frame := publishFrame(ref, batch)
		var id uint64
		publish := func() {
			id++
			binary.LittleEndian.PutUint64(frame[8:], id)
			if _, err := c.nc.Write(frame); err != nil {
				t.Fatal(err)
			}
			if typ, err := c.readFrame(); err != nil || typ != wire.TypePublishAck {
				t.Fatalf("ack: %v %v", typ, err)
			}
		}
		for range 200 {
			publish()
		}
		if n := testing.AllocsPerRun(500, publish); n != 0 {
			t.Errorf("a forwarded publish of %d records: %.2f allocations", batch, n)
		}
	}
}

// dialClientAt is dialBench by address, for tests too: a client of the
// server at addr, past its HELLO.
func dialClientAt(tb testing.TB, addr string) *benchConn {
	tb.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { nc.Close() })
	c := &benchConn{nc: nc, r: bufio.NewReaderSize(nc, 64<<10)}
	if _, err := nc.Write(wire.AppendHello(nil, 1, wire.Hello{VersionMin: 1, VersionMax: 1, Features: wire.FeaturesAll})); err != nil {
		tb.Fatal(err)
	}
	if typ, err := c.readFrame(); err != nil || typ != wire.TypeHelloOK {
		tb.Fatalf("hello: %v %v", typ, err)
	}
	return c
}
