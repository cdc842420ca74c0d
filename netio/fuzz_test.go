package netio

import (
	"testing"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio/wire"
)

// FuzzTraffic feeds arbitrary bytes to a connection after its handshake,
// in two reads: the server must never panic, must answer whatever it read
// with frames a client can decode, and once it refuses a frame it must
// handle nothing after it.
func FuzzTraffic(f *testing.F) {
	ref := wireRef(engine.StreamID{Tenant: "acme", Namespace: "prod", Name: "fuzz"})
	seeds := [][]byte{
		wire.AppendPublish(nil, 2, ref, wire.AckPerBatch, wire.Record{Value: []byte("v")}),
		wire.AppendPublishBatch(nil, 3, ref, wire.AckPerMessage, []wire.Record{{Key: []byte("k"), Value: []byte("a")}, {Value: []byte("b")}}),
		wire.AppendPublishJSON(nil, 4, ref, wire.AckNone, nil, []wire.Record{{Key: []byte("k"), Value: []byte("j")}}),
		wire.AppendControl(nil, 5, &wire.Subscribe{Stream: ref, Start: wire.Start{From: wire.StartEarliest}}),
		wire.AppendControl(nil, 6, &wire.StreamDescribe{Stream: ref}),
		wire.AppendControl(nil, 7, &wire.StreamList{Tenant: "acme"}),
		wire.AppendPing(nil, 8, 9),
		header(1<<30, wire.TypePublish, 0, 10),
	}
	for _, s := range seeds {
		f.Add(s, len(s)/2)
	}
	f.Fuzz(func(t *testing.T, in []byte, split int) {
		s, e := loopServer(t)
		if _, err := e.CreateStream(idOf(ref), engine.StreamConfig{Shards: 2}); err != nil {
			t.Fatal(err)
		}
		fc := &loopConn{in: wire.AppendHello(nil, 1, wire.Hello{VersionMin: 1, VersionMax: 1, Features: wire.FeaturesAll})}
		c := newConn(s, fc)
		c.traffic()
		fc.out = fc.out[:0]
		split = min(max(split, 0), len(in))
		for _, part := range [][]byte{in[:split], in[split:]} {
			fc.in = append(fc.in, part...)
			c.traffic()
			fc.runPending()
		}
		c.closed()
		checkAnswers(t, fc.out, c.refusing)
	})
}

// checkAnswers decodes everything the server wrote; after a refusal the
// ERROR must be the last frame.
func checkAnswers(t *testing.T, out []byte, refused bool) {
	var r wire.Reader
	var last wire.Type
	for len(out) > 0 {
		f, need, err := r.Next(out)
		if err != nil || need > 0 {
			t.Fatalf("the server wrote an undecodable frame: need %d, %v", need, err)
		}
		last = f.Type
		out = out[f.Size():]
	}
	if refused && last != wire.TypeError {
		t.Fatalf("refused, but the last frame written is %v", last)
	}
}
