package netio

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/panjf2000/gnet/v2"

	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/netio/wire"
)

// heldPeers is a peer.Transport that keeps every call it is sent for the
// test to answer (as a leader answers later, on another goroutine), and
// allocates nothing in steady state.
type heldPeers struct {
	mu    sync.Mutex
	calls []*peer.Call
	last  []byte // a copy of the last request, as Send copies it
}

func (p *heldPeers) ID() string          { return "a" }
func (p *heldPeers) Handle(peer.Handler) {}
func (p *heldPeers) Close() error        { return nil }
func (p *heldPeers) Send(c *peer.Call) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, c)
	p.last = append(p.last[:0], c.Request...)
	return nil
}

func (p *heldPeers) Call(context.Context, string, []byte, []byte) (wire.Frame, error) {
	return wire.Frame{}, errors.New("heldPeers: Call is not used")
}

// answer completes every call held with the answer frame.
func (p *heldPeers) answer(frame []byte) {
	f, _, _ := (&wire.Reader{}).Next(frame)
	p.mu.Lock()
	calls := p.calls
	p.calls = p.calls[:0]
	p.mu.Unlock()
	for _, c := range calls {
		c.Done(c, f, nil)
	}
}

// asyncLoopConn is a loopConn whose AsyncWrite keeps its writes in a
// reused list instead of closures, so a test of answers given off the
// loop counts the server's allocations only.
type asyncLoopConn struct {
	loopConn
	writes []asyncWrite
}

type asyncWrite struct {
	b  []byte
	cb gnet.AsyncCallback
}

func (f *asyncLoopConn) AsyncWrite(b []byte, cb gnet.AsyncCallback) error {
	f.writes = append(f.writes, asyncWrite{b, cb})
	return nil
}

// runWrites does what gnet would on the loop: each write, then its
// callback (which may queue more).
func (f *asyncLoopConn) runWrites() {
	for len(f.writes) > 0 {
		w := f.writes[0]
		f.writes = f.writes[:copy(f.writes, f.writes[1:])]
		f.out = append(f.out, w.b...)
		_ = w.cb(f, nil)
	}
}

// forwardingLoopConn is a connection of a never-started server "a" whose
// shard 0 "b" leads, forwarding through held, driven as the loop would.
func forwardingLoopConn(t *testing.T) (*conn, *asyncLoopConn, *heldPeers, wire.StreamRef, wire.CacheRef) {
	t.Helper()
	r := newRoutes("a", "b", "a")
	held := &heldPeers{}
	fwd, err := NewForwarder(ForwarderConfig{Peers: held, Router: r})
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(engine.Options{Owner: r, Forward: fwd})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	store, err := cache.Open(cache.Options{Owner: r})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	id := engine.StreamID{Tenant: "acme", Namespace: "prod", Name: "hot"}
	if _, err := e.CreateStream(id, engine.StreamConfig{Shards: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Create(hotID, cache.Config{Shards: 2}); err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(Config{Engine: e, BrokerID: "a", Owner: r, Caches: store, Forwarder: fwd})
	if err != nil {
		t.Fatal(err)
	}
	fc := &asyncLoopConn{}
	c := newConn(s, fc)
	fc.in = wire.AppendHello(nil, 1, wire.Hello{VersionMin: 1, VersionMax: 1, Features: wire.FeaturesAll})
	c.traffic()
	fc.out = fc.out[:0]
	return c, fc, held, wireRef(id), wire.CacheRef{Tenant: []byte(hotID.Tenant), Namespace: []byte(hotID.Namespace), Cache: []byte(hotID.Name)}
}

// A forwarded publish allocates nothing on the ingress in steady state:
// decoding, the engine's split, the FORWARD's encoding, the call, the
// leader's ack and the client's PUBLISH_ACK; a publish spanning the
// forwarded shard and a local one, and a forwarded cache get, neither.
func TestAForwardedRequestAllocatesNothingOnTheIngress(t *testing.T) {
	c, fc, held, ref, cref := forwardingLoopConn(t)
	recs := make([]wire.Record, 16)
	for i := range recs {
		recs[i] = wire.Record{Key: keyOn(0, i), Value: make([]byte, 1024)}
	}
	mixed := append([]wire.Record{{Key: keyOn(1, 0), Value: make([]byte, 1024)}}, recs[:8]...)
	ack := wire.AppendPublishAck(nil, 0, wire.AckRun{Shard: 0, FirstOffset: 40, Count: 16})
	ack8 := wire.AppendPublishAck(nil, 0, wire.AckRun{Shard: 0, FirstOffset: 40, Count: 8})
	value := wire.AppendCacheValue(nil, 0, wire.CacheValue{Found: true, Offset: 3, Value: make([]byte, 512)})
	cases := []struct {
		name          string
		frame, answer []byte
		want          wire.Type
	}{
		{"forwarded PUBLISH_BATCH", wire.AppendPublishBatch(nil, 2, ref, wire.AckPerBatch, recs), ack, wire.TypePublishAck},
		{"PUBLISH_BATCH half forwarded", wire.AppendPublishBatch(nil, 3, ref, wire.AckPerBatch, mixed), ack8, wire.TypePublishAck},
		{"forwarded CACHE_GET", wire.AppendCacheGet(nil, 4, wire.CacheGet{Cache: cref, Key: keyOn(0, 0)}), value, wire.TypeCacheValue},
	}
	for _, tc := range cases {
		fc.out = fc.out[:0]
		request := func() {
			fc.in = tc.frame
			c.traffic()
			held.answer(tc.answer)
			fc.runWrites()
		}
		request()
		if f, _, err := (&wire.Reader{}).Next(fc.out); err != nil || f.Type != tc.want {
			t.Fatalf("%s: answered %v (%v): %v", tc.name, f.Type, err, decodeErr(f))
		}
		var m wire.Forward
		if err := m.Decode(mustForward(t, held.last), wire.Limits{}); err != nil || len(m.Credential) != 0 {
			t.Fatalf("%s: sent %v", tc.name, err)
		}
		for range 100 {
			fc.out = fc.out[:0]
			request()
		}
		if raceEnabled {
			t.Skip("allocation counts are meaningless under the race detector")
		}
		if n := testing.AllocsPerRun(500, func() { fc.out = fc.out[:0]; request() }); n != 0 {
			t.Errorf("%s: %.2f allocations per request", tc.name, n)
		}
	}
	if c.s.work.n.Load() != 0 {
		t.Fatalf("work left: %d", c.s.work.n.Load())
	}
}

func mustForward(t *testing.T, b []byte) wire.Frame {
	t.Helper()
	f, need, err := (&wire.Reader{Limits: wire.Limits{FrameBytesMax: peer.DefaultFrameBytesMax}}).Next(b)
	if err != nil || need != 0 || f.Type != wire.TypeForward {
		t.Fatalf("not a FORWARD: %v %d %v", f.Type, need, err)
	}
	return f
}
