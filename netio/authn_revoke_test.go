package netio

import (
	"crypto/ed25519"
	"testing"
	"time"

	"github.com/felixbroker/felix/auth"
	"github.com/felixbroker/felix/netio/wire"
)

// Once the key that signed a connection's token is no longer trusted (the
// broker reloaded its keys), a request is unauthenticated and closes the
// connection, the sweep closes a connection that sends nothing (a
// subscriber's), and a connection whose key is still trusted goes on.
func TestAConnectionWhoseKeyIsNoLongerTrustedEnds(t *testing.T) {
	clock := newFakeClock()
	old, kept := newSigner(t, clock), newSigner(t, clock)
	v, err := auth.NewVerifier([]ed25519.PublicKey{old.public(), kept.public()}, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	b := startBroker(t, func(c *Config) { c.Authenticator = NewTokenAuthenticator(v) })
	ref := b.createStream("orders", 1)
	busy := b.dial()
	busy.hello(wire.FeaturesAll, old.token("acme", time.Hour, "publish:prod/*"))
	quiet := b.dial()
	quiet.hello(wire.FeaturesAll, old.token("acme", time.Hour, "publish:prod/*"))
	other := b.dial()
	other.hello(wire.FeaturesAll, kept.token("acme", time.Hour, "publish:prod/*"))

	if err := v.SetKeys([]ed25519.PublicKey{kept.public()}); err != nil {
		t.Fatal(err)
	}
	busy.send(wire.AppendPublish(nil, 2, ref, wire.AckPerBatch, wire.Record{Value: []byte("after")}))
	busy.expectError(wire.CodeUnauthenticated, 2)
	busy.expectClosed()
	b.s.sweep(time.Now()) // real time: the tokens, from the fake clock's 2030, are far from expiry
	quiet.expectError(wire.CodeUnauthenticated, 0)
	quiet.expectClosed()
	if n := b.s.AuthMetrics().TokensRevoked.Load(); n != 1 {
		t.Fatalf("TokensRevoked = %d, want 1 (the quiet connection)", n)
	}
	other.send(wire.AppendPublish(nil, 3, ref, wire.AckPerBatch, wire.Record{Value: []byte("kept")}))
	ackOf(t, other.read())
}
