package netio

import (
	"crypto/ed25519"
	"testing"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

func setRelay(from, cred string, busy bool) *relayConn {
	rc := &relayConn{t: newRelayTransport(from, wire.Limits{}), from: from, cred: cred}
	if busy {
		rc.t.inService.Store(1)
	}
	return rc
}

// The set keeps one connection per (peer, credential), in the order of
// use; full, it evicts the least recently used one with nothing in
// service, and refuses when every one is busy; once stopped, it keeps
// nothing.
func TestTheRelaySetIsBoundedAndEvictsTheLeastRecentlyUsedIdleOne(t *testing.T) {
	rs := relaySet{max: 3}
	x, y, z := setRelay("a", "x", false), setRelay("a", "y", true), setRelay("c", "x", false)
	for _, rc := range []*relayConn{x, y, z} {
		if kept, ev, e := rs.insert(rc); kept != rc || ev != nil || e != nil {
			t.Fatalf("insert %s/%s: %v %v %v", rc.from, rc.cred, kept, ev, e)
		}
	}
	if dup := setRelay("a", "x", false); func() bool { kept, _, _ := rs.insert(dup); return kept != x }() {
		t.Fatal("a second connection for (a, x) was kept")
	}
	if rs.find("a", []byte("x")) != x || rs.find("a", []byte("z")) != nil || rs.find("b", []byte("x")) != nil {
		t.Fatal("find")
	}
	// Use order now, oldest first: y (busy), z, x.
	w := setRelay("b", "w", false)
	if kept, ev, e := rs.insert(w); kept != w || ev != z || e != nil {
		t.Fatalf("full: kept %v, evicted %v (want z), %v", kept, ev, e)
	}
	if rs.find("c", []byte("x")) != nil || rs.len() != 3 {
		t.Fatal("the evicted connection is still found")
	}
	x.t.inService.Store(1)
	w.t.inService.Store(1)
	if _, _, e := rs.insert(setRelay("b", "v", false)); e == nil || e.Code != wire.CodeOverloaded {
		t.Fatalf("every connection busy: %v", e)
	}
	rs.remove(y)
	rs.remove(y)
	if got := rs.all(); len(got) != 2 || got[0] != w || got[1] != x {
		t.Fatalf("after remove: %v", got)
	}
	rs.closed = true
	if _, _, e := rs.insert(setRelay("b", "u", false)); e == nil || e.Code != wire.CodeShuttingDown {
		t.Fatalf("stopped: %v", e)
	}
}

// Over the network: past the bound the least recently used relay
// connection is closed and a later request for its credential opens
// another; the sweep closes those idle past relayIdleNanos.
func TestRelayConnectionsAreBoundedAndClosedWhenIdle(t *testing.T) {
	clock := newFakeClock()
	sg := newSigner(t, clock)
	keys := []ed25519.PublicKey{sg.public()}
	c := authCluster(t, keys, keys)
	ref := c.createStream("orders")
	b := c.m["b"]
	b.s.relays.mu.Lock()
	b.s.relays.max = 2
	b.s.relays.mu.Unlock()
	var clients []*rawClient
	for _, perm := range []string{"publish:prod/*", "publish:prod/o*", "publish:prod/or*"} {
		clients = append(clients, c.m["a"].client(sg.token("acme", time.Hour, perm)))
	}
	recs := []wire.Record{{Key: keyOn(0, 0), Value: []byte("x")}}
	for _, cl := range clients {
		ackOf(t, cl.publishKeyed(ref, recs))
	}
	waitUntil(t, "the evicted relay connection to close", func() bool { return b.s.Metrics().RelayConnsActive.Load() == 2 })
	if b.s.relays.len() != 2 || b.s.Metrics().RelayConnsOpened.Load() != 3 {
		t.Fatalf("%d kept, %d opened", b.s.relays.len(), b.s.Metrics().RelayConnsOpened.Load())
	}
	ackOf(t, clients[0].publishKeyed(ref, recs))
	if n := b.s.Metrics().RelayConnsOpened.Load(); n != 4 {
		t.Fatalf("the evicted credential's next request opened %d", n-3)
	}
	b.s.sweep(b.clock.advance(time.Minute))
	if b.s.relays.len() != 2 {
		t.Fatal("the sweep closed relay connections in use a minute ago")
	}
	b.s.sweep(b.clock.advance(2 * time.Minute))
	waitUntil(t, "the idle relay connections to close", func() bool { return b.s.Metrics().RelayConnsActive.Load() == 0 })
	ackOf(t, clients[1].publishKeyed(ref, recs))
}
