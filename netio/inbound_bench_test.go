package netio

import (
	"testing"

	"github.com/felixbroker/felix/netio/wire"
)

// BenchmarkTrafficInbound times a connection's reads on its loop, without a
// network: a 66 KiB publish batch (64 records of 1 KiB, as the pipelined
// loopback benchmark sends) arriving whole in one read, and cut across two
// reads as a pipelining client's reads end. The stream does not exist, so
// each frame is read, checked and answered not_found, and nothing is kept:
// what is timed is the way in. The fake transport keeps what a read leaves
// without copying it; gnet copies it into its inbound buffer and, when a
// frame spans that and the next read, once more into a pooled slice, so
// the cut case here understates what a real read costs before this
// package copied the start of a frame out itself (once, into a frameBuf).
func BenchmarkTrafficInbound(b *testing.B) {
	for _, bc := range []struct {
		name string
		cut  int
	}{{"whole", 0}, {"cut", 40 << 10}} {
		b.Run(bc.name, func(b *testing.B) { benchInbound(b, bc.cut) })
	}
}

func benchInbound(b *testing.B, cut int) {
	s, _ := loopServer(b)
	fc := &loopConn{}
	c := newConn(s, fc)
	fc.in = wire.AppendHello(nil, 1, wire.Hello{VersionMin: 1, VersionMax: 1, Features: wire.FeaturesAll})
	c.traffic()
	recs := make([]wire.Record, 64)
	for i := range recs {
		recs[i] = wire.Record{Value: make([]byte, 1024)}
	}
	ref := wire.StreamRef{Tenant: []byte("acme"), Namespace: []byte("prod"), Stream: []byte("absent")}
	frame := wire.AppendPublishBatch(nil, 2, ref, wire.AckPerBatch, recs)
	back := make([]byte, 0, 2*len(frame)) // the transport's buffer: what a read leaves stays in it
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		fc.in = append(back[:0], frame[:cut]...)
		if cut > 0 {
			c.traffic()
		}
		fc.in = append(fc.in, frame[cut:]...)
		c.traffic()
		fc.out = fc.out[:0]
	}
}
