package netio

import (
	"context"
	"crypto/ed25519"
	"errors"
	"testing"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/felixbroker/felix/auth"
	"github.com/felixbroker/felix/netio/wire"
)

// signer issues tokens with one key; its verifier trusts that key alone.
type signer struct {
	t     testing.TB
	priv  ed25519.PrivateKey
	clock *fakeClock
}

func newSigner(t testing.TB, clock *fakeClock) *signer {
	t.Helper()
	priv, err := auth.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return &signer{t: t, priv: priv, clock: clock}
}

func (s *signer) public() ed25519.PublicKey { return s.priv.Public().(ed25519.PublicKey) }

func (s *signer) token(tenant string, ttl time.Duration, perms ...string) []byte {
	s.t.Helper()
	tok, err := auth.Issue(s.priv, tenant, "svc", perms, ttl, s.clock.Now())
	if err != nil {
		s.t.Fatal(err)
	}
	return []byte(tok)
}

// authenticator trusts keys, reading the clock.
func authenticator(t testing.TB, clock *fakeClock, keys ...ed25519.PublicKey) *TokenAuthenticator {
	t.Helper()
	v, err := auth.NewVerifier(keys, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	return NewTokenAuthenticator(v)
}

func principalFor(t testing.TB, a *TokenAuthenticator, token []byte) Principal {
	t.Helper()
	p, err := a.Authenticate(token)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func codeOf(err error) wire.Code {
	var e *wire.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// Each checked action needs exactly the permission the table names: a
// token granting that one permission is allowed, a token granting every
// other one is not. An action missing from the table is refused whatever
// the token grants.
func TestEveryCheckedActionNeedsTheTablesPermission(t *testing.T) {
	clock := newFakeClock()
	sg := newSigner(t, clock)
	a := authenticator(t, clock, sg.public())
	perms := []auth.Action{auth.ActionPublish, auth.ActionSubscribe, auth.ActionCacheRead, auth.ActionCacheWrite,
		auth.ActionCounter, auth.ActionGroup, auth.ActionAdmin}
	res := Resource{Tenant: "acme", Namespace: "prod", Stream: "orders"}
	for action, need := range actionTable {
		var others []string
		for _, p := range perms {
			if p != need {
				others = append(others, string(p)+":*")
			}
		}
		if err := principalFor(t, a, sg.token("acme", time.Hour, string(need)+":prod/*")).Allow(action, res); err != nil {
			t.Errorf("%s with %s: %v", action, need, err)
		}
		if err := principalFor(t, a, sg.token("acme", time.Hour, others...)).Allow(action, res); codeOf(err) != wire.CodeForbidden {
			t.Errorf("%s without %s: %v", action, need, err)
		}
	}
	all := principalFor(t, a, sg.token("acme", time.Hour, "*:*"))
	if err := all.Allow("stream.truncate", res); codeOf(err) != wire.CodeForbidden {
		t.Fatalf("an action missing from the table: %v", err)
	}
	for _, stream := range []Action{ActionStreamCreate, ActionStreamDelete, ActionStreamDescribe, ActionStreamList} {
		if got, _ := PermissionFor(stream); got != auth.ActionAdmin {
			t.Errorf("%s needs %q, want admin", stream, got)
		}
	}
}

// A principal refuses another tenant's names however the names read, and
// an expired token is unauthenticated, not forbidden.
func TestATokenIsBoundToItsTenantAndItsLifetime(t *testing.T) {
	clock := newFakeClock()
	sg := newSigner(t, clock)
	p := principalFor(t, authenticator(t, clock, sg.public()), sg.token("acme", time.Minute, "*:*"))
	for _, res := range []Resource{{Tenant: "globex", Namespace: "prod", Stream: "orders"}, {Tenant: "", Namespace: "acme", Stream: "x"},
		{Tenant: "acme/", Namespace: "prod", Stream: "orders"}} {
		if err := p.Allow(ActionPublish, res); codeOf(err) != wire.CodeForbidden {
			t.Errorf("%+v: %v", res, err)
		}
	}
	clock.advance(time.Minute)
	if err := p.Allow(ActionPublish, Resource{Tenant: "acme", Namespace: "prod", Stream: "orders"}); codeOf(err) != wire.CodeUnauthenticated {
		t.Fatalf("after expiry: %v", err)
	}
}

// Allow runs before every publish on an event loop.
func TestATokenPrincipalAllowsWithoutAllocating(t *testing.T) {
	clock := newFakeClock()
	sg := newSigner(t, clock)
	p := principalFor(t, authenticator(t, clock, sg.public()), sg.token("acme", time.Hour, "subscribe:*", "publish:prod-namespace/*"))
	res := Resource{Tenant: "acme", Namespace: "prod-namespace", Stream: "a-stream-name-longer-than-32-bytes"}
	if n := testing.AllocsPerRun(200, func() { _ = p.Allow(ActionPublish, res) }); n != 0 {
		t.Fatalf("Allow allocated %v times", n)
	}
}

// startAuthBroker starts a broker that verifies tokens signed by sg.
func startAuthBroker(t *testing.T, clock *fakeClock, sg *signer, mutate ...func(*Config)) *testBroker {
	t.Helper()
	a := authenticator(t, clock, sg.public())
	return startBroker(t, append([]func(*Config){func(c *Config) { c.Authenticator = a }}, mutate...)...)
}

// A token that expires mid-connection stops working at its expiry: a
// request after it is unauthenticated and closes the connection, and the
// sweep closes a connection that sends nothing.
func TestATokenThatExpiresMidConnectionEndsIt(t *testing.T) {
	clock := newFakeClock()
	sg := newSigner(t, clock)
	b := startAuthBroker(t, clock, sg)
	ref := b.createStream("orders", 1)
	tok := sg.token("acme", time.Minute, "publish:prod/*")

	busy := b.dial()
	busy.hello(wire.FeaturesAll, tok)
	busy.send(wire.AppendPublish(nil, 1, ref, wire.AckPerBatch, wire.Record{Value: []byte("before")}))
	ackOf(t, busy.read())
	quiet := b.dial()
	quiet.hello(wire.FeaturesAll, tok)

	clock.advance(time.Minute) // the verifier's clock: the server's own sweep still reads real time
	busy.send(wire.AppendPublish(nil, 2, ref, wire.AckPerBatch, wire.Record{Value: []byte("after")}))
	busy.expectError(wire.CodeUnauthenticated, 2)
	busy.expectClosed()

	b.s.sweep(clock.Now())
	quiet.expectError(wire.CodeUnauthenticated, 0)
	quiet.expectClosed()
	if n := b.s.AuthMetrics().TokensExpired.Load(); n != 1 {
		t.Fatalf("TokensExpired = %d, want 1 (the quiet connection)", n)
	}
	late := b.dial()
	late.send(wire.AppendHello(nil, 1, wire.Hello{VersionMin: 1, VersionMax: 1, Token: tok}))
	late.expectError(wire.CodeUnauthenticated, 1)
	late.expectClosed()
}

// onLoop runs fn on the connection's loop and waits for it: how a test
// reads loop-owned state.
func onLoop(t *testing.T, c *conn, fn func()) {
	t.Helper()
	done := make(chan struct{})
	err := c.gc.EventLoop().Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
		fn()
		close(done)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(waitLimit):
		t.Fatal("the loop never ran the task")
	}
}

// onlyConn is the broker's one open connection.
func onlyConn(t *testing.T, b *testBroker) *conn {
	t.Helper()
	conns := b.s.connections()
	if len(conns) != 1 {
		t.Fatalf("%d connections, want 1", len(conns))
	}
	return conns[0]
}

// A request forwarded from the ingress broker is authorized again at the
// owner with the client's original credential: a credential tampered with
// on the way, expired since the ingress accepted it, signed by a key the
// owner does not trust, or lacking the permission is refused there.
func TestAForwardedCredentialIsVerifiedAgainAtTheOwner(t *testing.T) {
	clock := newFakeClock()
	sg := newSigner(t, clock)
	ingress := startAuthBroker(t, clock, sg)
	owner := startAuthBroker(t, clock, sg)
	res := Resource{Tenant: "acme", Namespace: "prod", Stream: "orders"}

	c := ingress.dial()
	c.hello(wire.FeaturesAll, sg.token("acme", time.Minute, "publish:prod/*"))
	var cred []byte
	ic := onlyConn(t, ingress)
	onLoop(t, ic, func() { cred = append([]byte(nil), ic.credential()...) })
	if err := owner.s.AuthorizeForwarded(cred, ActionPublish, res); err != nil {
		t.Fatalf("the owner refused what the ingress accepted: %v", err)
	}
	if err := owner.s.AuthorizeForwarded(cred, ActionSubscribe, res); codeOf(err) != wire.CodeForbidden {
		t.Fatalf("a permission the token lacks: %v", err)
	}
	if err := owner.s.AuthorizeForwarded(cred, ActionPublish, Resource{Tenant: "globex", Namespace: "prod", Stream: "orders"}); codeOf(err) != wire.CodeForbidden {
		t.Fatalf("another tenant's names: %v", err)
	}
	tampered := append([]byte(nil), cred...)
	tampered[len(tampered)/2] ^= 0x01 // a byte of the claims
	if err := owner.s.AuthorizeForwarded(tampered, ActionPublish, res); codeOf(err) != wire.CodeUnauthenticated {
		t.Fatalf("a tampered credential: %v", err)
	}
	stranger := startAuthBroker(t, clock, newSigner(t, clock))
	if err := stranger.s.AuthorizeForwarded(cred, ActionPublish, res); codeOf(err) != wire.CodeUnauthenticated {
		t.Fatalf("an owner that does not trust the key: %v", err)
	}
	clock.advance(time.Minute)
	if err := owner.s.AuthorizeForwarded(cred, ActionPublish, res); codeOf(err) != wire.CodeUnauthenticated {
		t.Fatalf("a credential expired since HELLO: %v", err)
	}
	if err := startBroker(t).s.AuthorizeForwarded(nil, ActionPublish, res); err != nil {
		t.Fatalf("an owner with auth off: %v", err)
	}
}
