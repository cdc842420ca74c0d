package netio

import (
	"bytes"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/netio/wire"
)

// The leader unreachable (the link cut: nothing comes back) gives the
// client a clear error and no ack: timeout, which says the request may
// have been applied, once the forwarder's Timeout passes; a read too,
// never a miss. Healed, forwarding works again.
func TestAnUnreachableLeaderGivesTheClientAClearErrorAndNoAck(t *testing.T) {
	c := newCluster(t, func(id string, o *memberOptions) { o.timeout = 50 * time.Millisecond })
	ref, cref := c.createStream("orders"), c.createCache("sessions")
	a := c.m["a"]
	cl := a.client(nil)
	c.net.Cut("a", "b")
	recs := []wire.Record{{Key: keyOn(0, 0), Value: []byte("lost")}, {Key: keyOn(1, 0), Value: []byte("kept")}}
	e := errorOf(t, cl.publishKeyed(ref, recs), wire.CodeTimeout)
	if !e.Code.Ambiguous() || !e.Code.Retryable() {
		t.Fatalf("%v: a timeout must be retryable and ambiguous", e)
	}
	errorOf(t, cl.get(cref, string(keyOn(0, 0))), wire.CodeTimeout)
	if m := a.fwd.Metrics(); m.Failed.Load() != 2 {
		t.Fatalf("failed %d", m.Failed.Load())
	}
	if got := cl.ping(); len(got) != 0 {
		t.Fatalf("frames after the errors: %v", got)
	}
	c.net.Heal("a", "b")
	ackOf(t, cl.publishKeyed(ref, recs))
}

// A leader the transport cannot reach at all (not on the network) is
// not_leader naming it, sent nothing; a shard with no leader known is
// not_leader naming none. For reads as for writes: never a miss.
func TestAShardThatCannotBeRoutedIsNotLeader(t *testing.T) {
	c := newCluster(t)
	ref, cref := c.createStream("orders"), c.createCache("sessions")
	a := c.m["a"]
	cl := a.client(nil)
	a.routes.setLeaders("gone", "a")
	e := errorOf(t, cl.publishKeyed(ref, []wire.Record{{Key: keyOn(0, 0), Value: []byte("x")}}), wire.CodeNotLeader)
	if e.Details.LeaderID != "gone" {
		t.Fatalf("unreachable leader: %+v", e)
	}
	errorOf(t, cl.get(cref, string(keyOn(0, 0))), wire.CodeNotLeader)
	a.routes.setLeaders("", "a")
	e = errorOf(t, cl.counterGet(cref, string(keyOn(0, 0))), wire.CodeNotLeader)
	if e.Details.LeaderID != "" || e.Details.LeaderAddr != "" {
		t.Fatalf("no leader known: %+v", e)
	}
	errorOf(t, cl.publishKeyed(ref, []wire.Record{{Key: keyOn(0, 0), Value: []byte("x")}}), wire.CodeNotLeader)
	if m := a.fwd.Metrics(); m.Sent.Load() != 0 || m.NotSent.Load() != 2 || m.NoLeader.Load() != 2 {
		t.Fatalf("sent %d, not sent %d, no leader %d", m.Sent.Load(), m.NotSent.Load(), m.NoLeader.Load())
	}
}

// Brokers that disagree about a shard's leader do not bounce a request
// between them: the one a request is forwarded to serves it or refuses it
// (not_leader, naming the leader it knows), never forwards it on.
func TestARelayedRequestIsNeverForwardedAgain(t *testing.T) {
	c := newCluster(t)
	ref, cref := c.createStream("orders"), c.createCache("sessions")
	b := c.m["b"]
	b.routes.setLeaders("a", "a") // b thinks a leads shard 0; a thinks b does
	cl := c.m["a"].client(nil)
	e := errorOf(t, cl.publishKeyed(ref, []wire.Record{{Key: keyOn(0, 0), Value: []byte("x")}}), wire.CodeNotLeader)
	if e.Details.LeaderAddr != c.m["a"].s.Addr().String() {
		t.Fatalf("not_leader from b names %+v", e.Details)
	}
	errorOf(t, cl.put(wire.CachePut{Cache: cref, Key: keyOn(0, 0), Value: []byte("v")}), wire.CodeNotLeader)
	errorOf(t, cl.get(cref, string(keyOn(0, 0))), wire.CodeNotLeader)
	if n := b.fwd.Metrics().Sent.Load(); n != 0 {
		t.Fatalf("b forwarded %d relayed requests", n)
	}
}

// The relay serves FORWARD only, and in it only the frames with one
// answer: a subscribe (the ingress redirects it), a publish asking for
// another ack than per batch, another peer frame, a FORWARD not carrying
// one whole frame are refused, and the relay goes on.
func TestTheRelayRefusesWhatIsNotForwarded(t *testing.T) {
	c := newCluster(t)
	ref, cref := c.createStream("orders"), c.createCache("sessions")
	rec := wire.Record{Key: keyOn(0, 0), Value: []byte("x")}
	sub := wire.AppendControl(nil, 1, &wire.Subscribe{Stream: ref})
	refused := map[string][]byte{
		"SUBSCRIBE":               wire.AppendForward(nil, 0, nil, sub),
		"CACHE_WATCH":             wire.AppendForward(nil, 0, nil, wire.AppendControl(nil, 1, &wire.CacheWatch{Cache: cref})),
		"PUBLISH ack none":        wire.AppendForward(nil, 0, nil, wire.AppendPublish(nil, 1, ref, wire.AckNone, rec)),
		"PUBLISH ack per message": wire.AppendForward(nil, 0, nil, wire.AppendPublish(nil, 1, ref, wire.AckPerMessage, rec)),
		"PUBLISH_JSON":            wire.AppendForward(nil, 0, nil, wire.AppendPublishJSON(nil, 1, ref, wire.AckPerBatch, nil, []wire.Record{rec})),
		"a bare CACHE_GET":        wire.AppendCacheGet(nil, 1, wire.CacheGet{Cache: cref, Key: []byte("k")}),
		"PING in a FORWARD":       wire.AppendForward(nil, 0, nil, wire.AppendPing(nil, 1, 7)),
	}
	for name, frame := range refused {
		errorOf(t, c.peerCall("a", "b", frame), wire.CodeInvalidArgument)
		t.Logf("%s: refused", name)
	}
	nested := wire.AppendForward(nil, 0, nil, wire.AppendForward(nil, 0, nil, sub))
	errorOf(t, c.peerCall("a", "b", nested), wire.CodeMalformedFrame)
	if n := c.m["b"].s.Metrics().RelayRefused.Load(); n != uint64(len(refused)+1) {
		t.Fatalf("relay refused %d", n)
	}
	pub := wire.AppendPublish(nil, 1, ref, wire.AckPerBatch, rec)
	ackOf(t, c.peerCall("a", "b", wire.AppendForward(nil, 0, nil, pub)))
}

// A FORWARD is a broker's frame: on the client port it is refused as
// malformed and the connection closes.
func TestAForwardOnTheClientPortIsRefused(t *testing.T) {
	c := newCluster(t)
	cref := c.createCache("sessions")
	cl := c.m["b"].client(nil)
	get := wire.AppendCacheGet(nil, 1, wire.CacheGet{Cache: cref, Key: []byte("k")})
	cl.send(wire.AppendForward(nil, 9, nil, get))
	cl.expectError(wire.CodeMalformedFrame, 9)
	cl.expectClosed()
}

// An answer larger than the outbox's write pieces reaches the ingress
// whole: the relay puts the pieces back together into one frame.
func TestALargeAnswerCrossesTheRelayWhole(t *testing.T) {
	c := newCluster(t)
	cref := c.createCache("blobs")
	cl := c.m["a"].client(nil)
	big := bytes.Repeat([]byte("0123456789abcdef"), (3*writeChunkBytes)/16+5)
	writtenOf(t, cl.put(wire.CachePut{Cache: cref, Key: keyOn(0, 0), Value: big}))
	for range 2 { // on the loop, then with the relay's part buffer reused
		if got := valueOf(t, cl.get(cref, string(keyOn(0, 0)))); !bytes.Equal(got.Value, big) {
			t.Fatalf("value of %d bytes came back as %d", len(big), len(got.Value))
		}
	}
}

// Relay connections are not client connections: a leader serving its
// maximum of client connections still serves forwarded requests, and
// counts them apart.
func TestRelayConnectionsDoNotCountAgainstTheConnectionLimit(t *testing.T) {
	c := newCluster(t, func(id string, o *memberOptions) {
		if id == "b" {
			o.tune = func(_ *member, cfg *Config) { cfg.ConnectionsMax = 1 }
		}
	})
	ref := c.createStream("orders")
	b := c.m["b"]
	b.client(nil)
	cl := c.m["a"].client(nil)
	ackOf(t, cl.publishKeyed(ref, []wire.Record{{Key: keyOn(0, 0), Value: []byte("x")}}))
	if m := b.s.Metrics(); m.ConnectionsActive.Load() != 1 || m.RelayConnsActive.Load() != 1 {
		t.Fatalf("b: %d connections, %d relay connections", m.ConnectionsActive.Load(), m.RelayConnsActive.Load())
	}
	if len(b.s.Connections()) != 1 {
		t.Fatalf("Connections lists %d", len(b.s.Connections()))
	}
}

// One peer's link reset with requests in flight fails each (outcome
// unknown), and the next request goes through.
func TestADisconnectFailsWhatWasInFlight(t *testing.T) {
	c := newCluster(t)
	ref := c.createStream("orders")
	cl := c.m["a"].client(nil)
	c.net.SetFaults("a", "b", peer.Faults{Hold: true})
	id := cl.id()
	cl.send(wire.AppendPublishBatch(nil, id, ref, wire.AckPerBatch, []wire.Record{{Key: keyOn(0, 0), Value: []byte("x")}}))
	waitUntil(t, "the FORWARD to be sent", func() bool { return c.m["a"].fwd.Metrics().Sent.Load() == 1 })
	c.net.Disconnect("a", "b")
	cl.expectError(wire.CodeTimeout, id)
	c.net.SetFaults("a", "b", peer.Faults{})
	ackOf(t, cl.publishKeyed(ref, []wire.Record{{Key: keyOn(0, 0), Value: []byte("y")}}))
}

// An unkeyed publish at the client frame limit grows when it is re-encoded
// keyed for its leader (a key length byte per record); the leader takes
// it all the same.
func TestAPublishAtTheFrameLimitIsForwardedWhole(t *testing.T) {
	lim := wire.Limits{FrameBytesMax: 64 << 10, BatchRecordsMax: 1000}
	c := newCluster(t, func(id string, o *memberOptions) {
		o.tune = func(_ *member, cfg *Config) { cfg.Limits = lim }
	})
	ref := c.createStream("orders")
	value := make([]byte, 60)
	recs := make([]wire.Record, 1000)
	for i := range recs {
		recs[i] = wire.Record{Value: value}
	}
	frame := wire.AppendPublishBatch(nil, 1, ref, wire.AckPerBatch, recs)
	for len(frame) < lim.FrameBytesMax-61 {
		recs[len(recs)-1].Value = append(recs[len(recs)-1].Value, 'x')
		frame = wire.AppendPublishBatch(nil, 1, ref, wire.AckPerBatch, recs)
	}
	if len(frame) > lim.FrameBytesMax {
		t.Fatalf("a frame of %d bytes", len(frame))
	}
	cl := c.m["a"].client(nil)
	if runs := ackOf(t, cl.publishKeyed(ref, recs)); len(runs) != 1 || runs[0].Shard != 0 || runs[0].Count != 1000 {
		t.Fatalf("runs %+v", runs)
	}
}
