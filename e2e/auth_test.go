package e2e

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/netio"
	"github.com/felixbroker/felix/netio/wire"
)

// A token without the publish permission is refused with forbidden, on
// either ingress (TCP and TLS, straight to the shard's leader) and when
// forwarded by a broker that does not lead the shard, where the leader
// verifies the credential again (unauthorizedPublishForwarded); the record
// does not land, and PublishAtLeastOnce gives up at the first refusal
// instead of retrying it.
func TestUnauthorizedPublishIsRefused(t *testing.T) {
	t.Run("forwarded", unauthorizedPublishForwarded)
	c := newClock()
	k := newKey(t, c)
	b := startSecured(t, c, nil, k)
	for _, in := range ingresses {
		t.Run(in, func(t *testing.T) {
			s := testStream(t, "orders")
			admin := b.mustDialOn(t, in, k.token("acme", "admin:*", "publish:orders/*"))
			if _, err := admin.CreateStream(testCtx(t), s, client.StreamConfig{Shards: 1}); err != nil {
				t.Fatal(err)
			}
			record, rec := recordingDialer()
			opts := []client.Option{client.WithRetryPolicy(client.RetryPolicy{Attempts: 5})}
			if in == "tcp" {
				opts = append(opts, record)
			}
			reader := b.mustDialOn(t, in, k.token("acme", "subscribe:*", "publish:other/*"), opts...)
			_, err := reader.Publish(testCtx(t), s, []byte("nope"))
			wantCode(t, "publish", err, client.ErrForbidden)
			if client.Retryable(err) {
				t.Fatal("a forbidden publish is reported retryable")
			}
			_, err = reader.PublishAtLeastOnce(testCtx(t), s, []byte("nope again"))
			wantCode(t, "publish at least once", err, client.ErrForbidden)
			if errors.Is(err, client.ErrRetriesExhausted) {
				t.Fatalf("a forbidden publish was retried: %v", err)
			}
			if in == "tcp" {
				if n := countFrames(rec, wire.TypePublish, wire.TypePublishBatch, wire.TypePublishJSON, t); n != 2 {
					t.Fatalf("%d publish frames sent, want 2 (one per call, no retry)", n)
				}
			}
			_, err = reader.Publish(testCtx(t), client.Stream{Tenant: "acme", Namespace: "orders", Name: "missing"}, []byte("x"))
			wantCode(t, "publish to a missing stream", err, client.ErrForbidden)
			if n := nextOffset(t, admin, s); n != 0 {
				t.Fatalf("%d records landed", n)
			}
			if _, err := admin.Publish(testCtx(t), s, []byte("yes")); err != nil {
				t.Fatalf("the permitted publish: %v", err)
			}
		})
	}
}

func countFrames(rec *recorder, t0, t1, t2 wire.Type, t *testing.T) int {
	n := 0
	for _, f := range rec.frames(t) {
		if f.Type == t0 || f.Type == t1 || f.Type == t2 {
			n++
		}
	}
	return n
}

// A token without the subscribe permission is refused with forbidden on
// either ingress, whether or not the stream exists.
func TestUnauthorizedSubscribeIsRefused(t *testing.T) {
	c := newClock()
	k := newKey(t, c)
	b := startSecured(t, c, nil, k)
	for _, in := range ingresses {
		t.Run(in, func(t *testing.T) {
			s := testStream(t, "orders")
			admin := b.mustDialOn(t, in, k.token("acme", "admin:*", "subscribe:orders/*"))
			if _, err := admin.CreateStream(testCtx(t), s, client.StreamConfig{Shards: 1}); err != nil {
				t.Fatal(err)
			}
			writer := b.mustDialOn(t, in, k.token("acme", "publish:*", "subscribe:elsewhere/*"))
			for _, target := range []client.Stream{s, {Tenant: "acme", Namespace: "orders", Name: "missing"}} {
				_, err := writer.Subscribe(testCtx(t), target, 0, client.SubscribeOptions{Start: client.FromEarliest()})
				wantCode(t, "subscribe to "+target.Name, err, client.ErrForbidden)
			}
			sub, err := admin.Subscribe(testCtx(t), s, 0, client.SubscribeOptions{Start: client.FromEarliest()})
			if err != nil {
				t.Fatalf("the permitted subscribe: %v", err)
			}
			sub.Close()
		})
	}
}

// Stream administration needs admin on the stream's namespace; a refusal
// never says whether the stream exists, and changes nothing.
func TestUnauthorizedStreamAdminIsRefused(t *testing.T) {
	c := newClock()
	k := newKey(t, c)
	b := startSecured(t, c, nil, k)
	s := testStream(t, "orders")
	admin := b.mustDialOn(t, "tcp", k.token("acme", "admin:orders/*"))
	if _, err := admin.CreateStream(testCtx(t), s, client.StreamConfig{Shards: 1}); err != nil {
		t.Fatal(err)
	}
	for name, perms := range map[string][]string{
		"no admin":                {"publish:*", "subscribe:*"},
		"admin elsewhere":         {"admin:billing/*"},
		"admin of another tenant": {"admin:*"},
	} {
		tenant := "acme"
		if name == "admin of another tenant" {
			tenant = "globex"
		}
		u := b.mustDialOn(t, "tcp", k.token(tenant, perms...))
		missing := client.Stream{Tenant: "acme", Namespace: "orders", Name: "missing"}
		_, err := u.CreateStream(testCtx(t), missing, client.StreamConfig{})
		wantCode(t, name+": create", err, client.ErrForbidden)
		wantCode(t, name+": delete", u.DeleteStream(testCtx(t), s), client.ErrForbidden)
		for _, target := range []client.Stream{s, missing} {
			_, err = u.DescribeStream(testCtx(t), target)
			wantCode(t, name+": describe "+target.Name, err, client.ErrForbidden)
		}
		_, err = u.ListStreams(testCtx(t), "acme", "orders")
		wantCode(t, name+": list", err, client.ErrForbidden)
	}
	streams, err := admin.ListStreams(testCtx(t), "acme", "orders")
	if err != nil || len(streams) != 1 {
		t.Fatalf("after the refusals: %v, %v", streams, err)
	}
	if _, err := admin.DescribeStream(testCtx(t), client.Stream{Tenant: "acme", Namespace: "orders", Name: "missing"}); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("an admin describing a missing stream: %v", err)
	}
}

// A token for tenant A used on tenant B's names is forbidden whatever the
// names say, even with every permission.
func TestATokenForOneTenantIsForbiddenOnAnothersNames(t *testing.T) {
	c := newClock()
	k := newKey(t, c)
	b := startSecured(t, c, nil, k)
	owner := b.mustDialOn(t, "tcp", k.token("acme", "*:*"))
	targets := []client.Stream{testStream(t, "orders"), {Tenant: "acme", Namespace: "globex", Name: "globex"}}
	for _, s := range targets {
		if _, err := owner.CreateStream(testCtx(t), s, client.StreamConfig{Shards: 1}); err != nil {
			t.Fatal(err)
		}
	}
	intruder := b.mustDialOn(t, "tcp", k.token("globex", "*:*"))
	for _, s := range targets {
		_, err := intruder.Publish(testCtx(t), s, []byte("x"))
		wantCode(t, "publish", err, client.ErrForbidden)
		_, err = intruder.Subscribe(testCtx(t), s, 0, client.SubscribeOptions{})
		wantCode(t, "subscribe", err, client.ErrForbidden)
		_, err = intruder.DescribeStream(testCtx(t), s)
		wantCode(t, "describe", err, client.ErrForbidden)
		if n := nextOffset(t, owner, s); n != 0 {
			t.Fatalf("%d records landed in %v", n, s)
		}
	}
	_, err := intruder.ListStreams(testCtx(t), "", "")
	wantCode(t, "list every tenant", err, client.ErrForbidden)
}

// A token presented after its expiry is refused at HELLO.
func TestAnExpiredTokenIsRefusedAtHello(t *testing.T) {
	c := newClock()
	k := newKey(t, c)
	b := startSecured(t, c, nil, k)
	tok := k.tokenFor(time.Minute, "acme", "*:*")
	c.advance(time.Minute)
	for _, in := range ingresses {
		_, err := b.dialOn(t, in, tok)
		wantCode(t, in, err, client.ErrUnauthenticated)
	}
}

// A token that expires mid-connection stops working at its expiry: the
// next operation is unauthenticated, and the broker closes a connection
// that sits idle past it (its subscription ends, saying why).
func TestATokenExpiringMidConnectionIsRefused(t *testing.T) {
	c := newClock()
	k := newKey(t, c)
	b := startSecured(t, c, func(cfg *netio.Config) {
		cfg.Now = c.Now                               // the sweep closes expired connections on the test's clock
		cfg.HandshakeTimeout = 200 * time.Millisecond // ... and runs every 50ms
	}, k)
	s := testStream(t, "orders")
	long := b.mustDialOn(t, "tcp", k.token("acme", "*:*"))
	if _, err := long.CreateStream(testCtx(t), s, client.StreamConfig{Shards: 1}); err != nil {
		t.Fatal(err)
	}
	tok := k.tokenFor(time.Minute, "acme", "*:*")
	busy := b.mustDialOn(t, "tcp", tok)
	if _, err := busy.Publish(testCtx(t), s, []byte("in time")); err != nil {
		t.Fatal(err)
	}
	idle := b.mustDialOn(t, "tls", tok)
	sub, err := idle.Subscribe(testCtx(t), s, 0, client.SubscribeOptions{Start: client.FromLatest()})
	if err != nil {
		t.Fatal(err)
	}
	c.advance(time.Minute)
	_, err = busy.Publish(testCtx(t), s, []byte("too late"))
	wantCode(t, "publish after expiry", err, client.ErrUnauthenticated)
	_, err = sub.Next(testCtx(t)) // the sweep, on the broker's clock, closes the connection
	wantCode(t, "subscription after expiry", err, client.ErrUnauthenticated)
	if n := nextOffset(t, long, s); n != 1 {
		t.Fatalf("%d records, want the one in time", n)
	}
}

// Tokens that were not signed as they read are unauthenticated: a broken
// signature, a key the broker does not trust, claims changed after
// signing.
func TestForgedTokensAreUnauthenticated(t *testing.T) {
	c := newClock()
	trusted, stranger := newKey(t, c), newKey(t, c)
	b := startSecured(t, c, nil, trusted)
	good := trusted.token("acme", "publish:orders/*")
	head, payload, sig := splitJWT(t, good)
	forged := map[string]string{
		"bad signature": head + "." + payload + "." + flipLast(sig),
		"unknown key":   stranger.token("acme", "*:*"),
		"tampered claims": head + "." + rewriteClaims(t, payload, func(m map[string]any) {
			m["perms"] = []string{"*:*"}
		}) + "." + sig,
		"another tenant's claims": head + "." + rewriteClaims(t, payload, func(m map[string]any) { m["tenant"] = "globex" }) + "." + sig,
		"no token":                "",
	}
	for name, tok := range forged {
		for _, in := range ingresses {
			_, err := b.dialOn(t, in, tok)
			wantCode(t, name+" over "+in, err, client.ErrUnauthenticated)
		}
	}
	b.mustDialOn(t, "tcp", good)
}

func splitJWT(t *testing.T, tok string) (string, string, string) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", tok)
	}
	return parts[0], parts[1], parts[2]
}

func flipLast(sig string) string {
	b := []byte(sig)
	if b[len(b)-2] == 'A' {
		b[len(b)-2] = 'B'
	} else {
		b[len(b)-2] = 'A'
	}
	return string(b)
}

func rewriteClaims(t *testing.T, payload string, edit func(map[string]any)) string {
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(out)
}

// Keys rotate: a broker trusting the old and the new key accepts tokens of
// both; once the old key is removed, its tokens are refused and the new
// ones still work.
func TestKeyRotationWithTwoTrustedKeys(t *testing.T) {
	c := newClock()
	old, next := newKey(t, c), newKey(t, c)
	both := startSecured(t, c, nil, old, next)
	for _, k := range []*key{old, next} {
		cl := both.mustDialOn(t, "tcp", k.token("acme", "*:*"))
		s := client.Stream{Tenant: "acme", Namespace: "rotation", Name: "s" + sanitize(t.Name())}
		if _, err := cl.CreateStream(testCtx(t), s, client.StreamConfig{}); err != nil && !errors.Is(err, client.ErrAlreadyExists) {
			t.Fatal(err)
		}
		if _, err := cl.Publish(testCtx(t), s, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	rotated := startSecured(t, c, nil, next)
	_, err := rotated.dialOn(t, "tcp", old.token("acme", "*:*"))
	wantCode(t, "the retired key", err, client.ErrUnauthenticated)
	rotated.mustDialOn(t, "tcp", next.token("acme", "*:*"))
}

// With auth off (the default of a broker without keys) everything is
// allowed: no token, any tenant.
func TestAuthOffAllowsAll(t *testing.T) {
	b := newBroker(t)
	c := b.dial(t)
	for _, tenant := range []string{"acme", "globex"} {
		s := client.Stream{Tenant: tenant, Namespace: "any", Name: "s"}
		if _, err := c.CreateStream(testCtx(t), s, client.StreamConfig{Shards: 1}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Publish(testCtx(t), s, []byte("x")); err != nil {
			t.Fatal(err)
		}
		sub, err := c.Subscribe(testCtx(t), s, 0, client.SubscribeOptions{Start: client.FromEarliest()})
		if err != nil {
			t.Fatal(err)
		}
		if ev, err := sub.Next(testCtx(t)); err != nil || string(ev.Value) != "x" {
			t.Fatalf("%s: %q %v", tenant, ev.Value, err)
		}
		sub.Close()
	}
	if _, err := c.ListStreams(testCtx(t), "", ""); err != nil {
		t.Fatal(err)
	}
}
