package netio

import (
	"encoding/binary"
	"sync"
	"testing"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio/wire"
)

// header builds a raw frame header with any length and type.
func header(length uint32, t wire.Type, flags wire.Flags, requestID uint64) []byte {
	b := binary.LittleEndian.AppendUint32(nil, length)
	b = binary.LittleEndian.AppendUint16(b, uint16(t))
	b = binary.LittleEndian.AppendUint16(b, uint16(flags))
	return binary.LittleEndian.AppendUint64(b, requestID)
}

func TestBrokenFramesAreAnsweredAndClosedWhileOtherConnectionsGoOn(t *testing.T) {
	b := startBroker(t, func(c *Config) { c.Limits.FrameBytesMax = 1 << 20 })
	ref := b.createStream("busy", 4)
	addr := b.s.Addr().String()

	const good = 16
	var wg sync.WaitGroup
	errs := make(chan error, good)
	start := make(chan struct{})
	for g := range good {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs <- publishN(addr, ref, g*1000, 400, 8)
		}()
	}
	close(start)

	stream := wire.AppendPublish(nil, 0, ref, wire.AckNone, wire.Record{Value: []byte("x")})
	cases := []struct {
		name      string
		bytes     []byte
		code      wire.Code
		requestID uint64
	}{
		{"oversized", header(1<<30, wire.TypePublish, 0, 21), wire.CodeFrameTooLarge, 21},
		{"oversized, header cut short", binary.LittleEndian.AppendUint32(nil, 1<<30), wire.CodeFrameTooLarge, 0},
		{"unknown type", header(12, 0x0999, 0, 22), wire.CodeUnknownFrameType, 22},
		{"length shorter than a header", header(4, wire.TypePing, 0, 23), wire.CodeMalformedFrame, 0},
		{"undefined flag", append(header(20, wire.TypePing, 0x8000, 24), make([]byte, 8)...), wire.CodeMalformedFrame, 24},
		{"truncated body", append(header(uint32(len(stream)-4-2), wire.TypePublish, 0, 25), stream[16:len(stream)-2]...), wire.CodeMalformedFrame, 25},
		{"not JSON", wire.AppendFrame(nil, wire.TypeSubscribe, 0, 26, []byte("[1]")), wire.CodeMalformedFrame, 26},
		{"a broker's frame", wire.AppendPublishAck(nil, 27, wire.AckRun{Count: 1}), wire.CodeMalformedFrame, 27},
		{"a replication frame", wire.AppendFence(nil, 28, wire.Fence{Log: wire.LogRef{Kind: 1, Tenant: []byte("t"),
			Namespace: []byte("n"), Name: []byte("busy")}, Generation: 9, Epoch: 1}), wire.CodeMalformedFrame, 28},
		{"a heartbeat", wire.AppendHeartbeat(nil, 29, wire.Heartbeat{Seq: 1, Broker: []byte("x"), DiskID: []byte("d")}),
			wire.CodeMalformedFrame, 29},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, addr)
			c.hello(wire.FeaturesAll, nil)
			c.send(tc.bytes)
			e := c.expectError(tc.code, tc.requestID)
			if tc.code == wire.CodeFrameTooLarge && (e.Details.Limit != wire.LimitFrameBytes || e.Details.LimitValue != 1<<20) {
				t.Fatalf("details %+v", e.Details)
			}
			c.expectClosed()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a well-behaved connection noticed: %v", err)
		}
	}
	if n := b.s.Metrics().FramesRefused.Load(); n != uint64(len(cases)) {
		t.Fatalf("%d frames refused, want %d", n, len(cases))
	}
	if st := mustStream(t, b, ref); totalEnd(st) != good*400 {
		t.Fatalf("%d records stored, want %d", totalEnd(st), good*400)
	}
}

// totalEnd is how many records a stream's shards hold.
func totalEnd(st *engine.Stream) int64 {
	var n int64
	for i := range st.Shards() {
		sh, _ := st.Shard(i)
		n += sh.End()
	}
	return n
}

func TestRequestErrorsKeepTheConnection(t *testing.T) {
	b := startBroker(t)
	ref := b.createStream("kept", 1)
	c := b.client(wire.FeaturesAll)
	bad := []struct {
		frame []byte
		code  wire.Code
	}{
		{wire.AppendControl(nil, 1, &wire.Subscribe{Stream: ref, Overflow: "Sometimes"}), wire.CodeInvalidArgument},
		{wire.AppendControl(nil, 2, &wire.StreamCreate{Stream: ref, Config: wire.StreamConfig{Consistency: "Eventual"}}), wire.CodeInvalidArgument},
		{wire.AppendControl(nil, 3, &wire.Unsubscribe{SubscriptionID: 404}), wire.CodeNotFound},
		{wire.AppendPublish(nil, 4, wire.StreamRef{Tenant: []byte("a b"), Namespace: []byte("n"), Stream: []byte("s")}, wire.AckPerBatch, wire.Record{Value: []byte("x")}), wire.CodeInvalidArgument},
	}
	for i, tc := range bad {
		c.send(tc.frame)
		c.expectError(tc.code, uint64(i+1))
	}
	c.send(wire.AppendPublish(nil, 5, ref, wire.AckPerBatch, wire.Record{Value: []byte("ok")}))
	ackOf(t, c.read())
}
