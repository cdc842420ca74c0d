package netio

import (
	"context"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/netio/wire"
)

// stopAsync starts m's Stop and returns its result's channel.
func stopAsync(m *member) <-chan error {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		done <- m.s.Stop(ctx)
	}()
	return done
}

func sendPublishes(t *testing.T, cl *rawClient, ref wire.StreamRef, n int) []uint64 {
	t.Helper()
	var ids []uint64
	for i := range n {
		id := cl.id()
		ids = append(ids, id)
		cl.send(wire.AppendPublishBatch(nil, id, ref, wire.AckPerBatch, []wire.Record{{Key: keyOn(0, i), Value: []byte("x")}}))
	}
	return ids
}

// The ingress's Stop waits for the forwarded publishes in flight and
// answers each with its leader's ack once the leader answers.
func TestStopAtTheIngressWaitsForForwardedPublishesToBeAnswered(t *testing.T) {
	c := newCluster(t)
	ref := c.createStream("orders")
	a := c.m["a"]
	cl := a.client(nil)
	c.net.SetFaults("a", "b", peer.Faults{Hold: true})
	ids := sendPublishes(t, cl, ref, 3)
	waitUntil(t, "the FORWARDs to be sent", func() bool { return a.fwd.Metrics().Sent.Load() == 3 })
	stopped := stopAsync(a)
	waitUntil(t, "Stop to begin", a.s.stopping.Load)
	c.net.SetFaults("a", "b", peer.Faults{})
	for _, id := range ids {
		f := cl.read()
		if f.RequestID != id || len(ackOf(t, f)) != 1 {
			t.Fatalf("answer %d for request %d", f.RequestID, id)
		}
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
}

// With its leader unreachable, the ingress's Stop fails each forwarded
// publish once the forwarder's Timeout passes, and returns.
func TestStopAtTheIngressFailsForwardedPublishesTheLeaderNeverAnswers(t *testing.T) {
	c := newCluster(t, func(id string, o *memberOptions) { o.timeout = 100 * time.Millisecond })
	ref := c.createStream("orders")
	a := c.m["a"]
	cl := a.client(nil)
	c.net.Cut("a", "b")
	ids := sendPublishes(t, cl, ref, 3)
	waitUntil(t, "the FORWARDs to be sent", func() bool { return a.fwd.Metrics().Sent.Load() == 3 })
	stopped := stopAsync(a)
	for _, id := range ids {
		cl.expectError(wire.CodeTimeout, id)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
}

// The leader's Stop answers what its relay connections took on, closes
// them, and refuses later FORWARDs with shutting_down, which the ingress
// relays to its client.
func TestStopAtTheLeaderAnswersRelayedRequestsAndRefusesLaterOnes(t *testing.T) {
	c := newCluster(t)
	ref, cref := c.createStream("orders"), c.createCache("sessions")
	b := c.m["b"]
	cl := c.m["a"].client(nil)
	ackOf(t, cl.publishKeyed(ref, []wire.Record{{Key: keyOn(0, 0), Value: []byte("x")}})) // a relay connection exists
	c.net.SetFaults("b", "a", peer.Faults{Hold: true})
	id := cl.id()
	cl.send(wire.AppendCachePut(nil, id, wire.CachePut{Cache: cref, Key: keyOn(0, 0), Value: []byte("v")}))
	waitUntil(t, "b to serve the put", func() bool { return b.s.Metrics().RelayRequests.Load() == 2 })
	if err := <-stopAsync(b); err != nil {
		t.Fatal(err)
	}
	if n := b.s.Metrics().RelayConnsActive.Load(); n != 0 {
		t.Fatalf("%d relay connections after Stop", n)
	}
	c.net.SetFaults("b", "a", peer.Faults{})
	if f := cl.read(); f.RequestID != id {
		t.Fatalf("answer for %d, want %d", f.RequestID, id)
	} else {
		writtenOf(t, f)
	}
	errorOf(t, cl.publishKeyed(ref, []wire.Record{{Key: keyOn(0, 0), Value: []byte("y")}}), wire.CodeShuttingDown)
	errorOf(t, cl.get(cref, string(keyOn(0, 0))), wire.CodeShuttingDown)
}
