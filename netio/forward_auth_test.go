package netio

import (
	"crypto/ed25519"
	"testing"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// authCluster is a cluster with auth on: "a" trusts keys aKeys, "b" bKeys;
// each verifies with its own clock.
func authCluster(t *testing.T, aKeys, bKeys []ed25519.PublicKey) *cluster {
	t.Helper()
	return newCluster(t, func(id string, o *memberOptions) {
		keys := aKeys
		if id == "b" {
			keys = bKeys
		}
		o.tune = func(m *member, cfg *Config) { cfg.Authenticator = authenticator(t, m.clock, keys...) }
	})
}

// A token the ingress trusts and the leader does not (its key is not among
// the leader's) is refused at the leader, unauthenticated, for a
// forwarded publish and a forwarded cache write alike; the client's
// connection goes on, and its requests for the ingress's own shard are
// served.
func TestACredentialTheLeaderDoesNotTrustIsRefusedThere(t *testing.T) {
	clock := newFakeClock()
	trusted, stranger := newSigner(t, clock), newSigner(t, clock)
	c := authCluster(t, []ed25519.PublicKey{trusted.public(), stranger.public()}, []ed25519.PublicKey{trusted.public()})
	ref, cref := c.createStream("orders"), c.createCache("sessions")
	cl := c.m["a"].client(stranger.token("acme", time.Hour, "*:*"))
	pub := cl.publishKeyed(ref, []wire.Record{{Key: keyOn(0, 0), Value: []byte("x")}})
	errorOf(t, pub, wire.CodeUnauthenticated)
	errorOf(t, cl.put(wire.CachePut{Cache: cref, Key: keyOn(0, 0), Value: []byte("v")}), wire.CodeUnauthenticated)
	errorOf(t, cl.get(cref, string(keyOn(0, 0))), wire.CodeUnauthenticated)
	if runs := ackOf(t, cl.publishKeyed(ref, []wire.Record{{Key: keyOn(1, 0), Value: []byte("a's")}})); len(runs) != 1 || runs[0].Shard != 1 {
		t.Fatalf("a publish for a's own shard: %+v", runs)
	}
	if c.m["b"].shardEnd(ref, 0) != 0 {
		t.Fatal("the refused publish landed")
	}
	if n := c.m["b"].s.relays.len(); n != 0 {
		t.Fatalf("b keeps %d relay connections for a credential it refused", n)
	}
	// The same token from a broker the leader trusts works through it.
	ok := c.m["a"].client(trusted.token("acme", time.Hour, "*:*"))
	ackOf(t, ok.publishKeyed(ref, []wire.Record{{Key: keyOn(0, 0), Value: []byte("x")}}))
}

// Permissions are the leader's to check too: a FORWARD whose credential
// lacks the permission is forbidden at the leader, whatever the ingress
// said (here no ingress checked: a broker sends the FORWARD itself); and a
// client the ingress forbids never reaches the leader.
func TestAForbiddenRequestIsRefusedForbiddenAtTheLeaderAndTheIngress(t *testing.T) {
	clock := newFakeClock()
	sg := newSigner(t, clock)
	keys := []ed25519.PublicKey{sg.public()}
	c := authCluster(t, keys, keys)
	ref, cref := c.createStream("orders"), c.createCache("sessions")
	readOnly := sg.token("acme", time.Hour, "subscribe:*", "cache.read:*")
	pub := wire.AppendPublishBatch(nil, 1, ref, wire.AckPerBatch, []wire.Record{{Key: keyOn(0, 0), Value: []byte("x")}})
	errorOf(t, c.peerCall("a", "b", wire.AppendForward(nil, 0, readOnly, pub)), wire.CodeForbidden)
	put := wire.AppendCachePut(nil, 1, wire.CachePut{Cache: cref, Key: keyOn(0, 0), Value: []byte("v")})
	errorOf(t, c.peerCall("a", "b", wire.AppendForward(nil, 0, readOnly, put)), wire.CodeForbidden)
	// The relay connection stays: a request it allows is served on it.
	get := wire.AppendCacheGet(nil, 1, wire.CacheGet{Cache: cref, Key: keyOn(0, 0)})
	valueOf(t, c.peerCall("a", "b", wire.AppendForward(nil, 0, readOnly, get)))
	if n := c.m["b"].s.Metrics().RelayConnsOpened.Load(); n != 1 {
		t.Fatalf("%d relay connections opened for one credential", n)
	}

	cl := c.m["a"].client(readOnly)
	errorOf(t, cl.publishKeyed(ref, []wire.Record{{Key: keyOn(0, 0), Value: []byte("x")}}), wire.CodeForbidden)
	errorOf(t, cl.put(wire.CachePut{Cache: cref, Key: keyOn(0, 0), Value: []byte("v")}), wire.CodeForbidden)
	if n := c.m["a"].fwd.Metrics().Sent.Load(); n != 0 {
		t.Fatalf("a forwarded %d requests it forbids", n)
	}
}

// A token that expires is refused at the leader on the leader's clock,
// though the ingress still holds it valid: on the relay connection that
// served it (unauthenticated, and the connection closes), then at the
// HELLO of the next one, verified again. The sweep closes a relay
// connection whose token expired.
func TestATokenThatExpiresIsRefusedAtTheLeader(t *testing.T) {
	clock := newFakeClock()
	sg := newSigner(t, clock)
	keys := []ed25519.PublicKey{sg.public()}
	c := authCluster(t, keys, keys)
	ref := c.createStream("orders")
	a, b := c.m["a"], c.m["b"]
	cl := a.client(sg.token("acme", time.Minute, "publish:prod/*"))
	recs := []wire.Record{{Key: keyOn(0, 0), Value: []byte("x")}}
	ackOf(t, cl.publishKeyed(ref, recs))
	if b.s.relays.len() != 1 {
		t.Fatal("no relay connection")
	}
	b.clock.advance(2 * time.Minute)
	e := errorOf(t, cl.publishKeyed(ref, recs), wire.CodeUnauthenticated)
	t.Logf("on the relay connection: %v", e)
	waitUntil(t, "the refused relay connection to close", func() bool { return b.s.Metrics().RelayConnsActive.Load() == 0 })
	errorOf(t, cl.publishKeyed(ref, recs), wire.CodeUnauthenticated)
	if b.shardEnd(ref, 0) != 1 {
		t.Fatalf("b's shard 0 holds %d records, want the first", b.shardEnd(ref, 0))
	}

	// The sweep: a fresh token, a relay connection, then its expiry.
	cl2 := a.client(sg.token("acme", 3*time.Minute, "publish:prod/*"))
	ackOf(t, cl2.publishKeyed(ref, recs))
	if b.s.relays.len() != 1 {
		t.Fatalf("%d relay connections", b.s.relays.len())
	}
	b.s.sweep(b.clock.advance(2 * time.Minute))
	waitUntil(t, "the sweep to close the expired relay connection", func() bool { return b.s.Metrics().RelayConnsActive.Load() == 0 })
	if got := b.s.AuthMetrics().TokensExpired.Load(); got != 1 {
		t.Fatalf("tokens expired %d", got)
	}
	errorOf(t, cl2.publishKeyed(ref, recs), wire.CodeUnauthenticated)
	cl2.ping() // the ingress still holds the client's token valid
}
