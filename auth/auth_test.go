package auth

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func keyPair(t *testing.T) (ed25519.PrivateKey, ed25519.PublicKey) {
	t.Helper()
	priv, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return priv, priv.Public().(ed25519.PublicKey)
}

func verifier(t *testing.T, now *time.Time, keys ...ed25519.PublicKey) *Verifier {
	t.Helper()
	v, err := NewVerifier(keys, func() time.Time { return *now })
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func issue(t *testing.T, priv ed25519.PrivateKey, tenant string, perms ...string) string {
	t.Helper()
	tok, err := Issue(priv, tenant, "svc", perms, time.Hour, t0)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestAValidTokenGrantsExactlyItsPermissions(t *testing.T) {
	priv, pub := keyPair(t)
	now := t0
	p, err := verifier(t, &now, pub).Verify(issue(t, priv, "acme", "publish:orders/*", "subscribe:orders/created", "admin:*"))
	if err != nil {
		t.Fatal(err)
	}
	allow := [][4]string{{"publish", "acme", "orders", "created"}, {"publish", "acme", "orders", "x.y"},
		{"subscribe", "acme", "orders", "created"}, {"admin", "acme", "any", "thing"}}
	for _, a := range allow {
		if err := p.Allow(Action(a[0]), a[1], a[2], a[3]); err != nil {
			t.Fatalf("%v refused: %v", a, err)
		}
	}
	deny := [][4]string{{"publish", "acme", "billing", "x"}, {"subscribe", "acme", "orders", "other"},
		{"cache.read", "acme", "orders", "created"}, {"publish", "globex", "orders", "created"}}
	for _, d := range deny {
		if err := p.Allow(Action(d[0]), d[1], d[2], d[3]); !errors.Is(err, ErrForbidden) {
			t.Fatalf("%v: got %v, want forbidden", d, err)
		}
	}
}

// A token for tenant A names tenant B's resources in vain.
func TestATokenForOneTenantIsRefusedOnAnothersNames(t *testing.T) {
	priv, pub := keyPair(t)
	now := t0
	p, _ := verifier(t, &now, pub).Verify(issue(t, priv, "acme", "*:*"))
	if err := p.Allow(ActionPublish, "globex", "orders", "created"); !errors.Is(err, ErrForbidden) {
		t.Fatalf("cross-tenant publish: %v", err)
	}
	if strings.Contains(p.Allow(ActionPublish, "globex", "orders", "created").Error(), "not found") {
		t.Fatal("a refusal must not reveal whether the resource exists")
	}
}

func TestAnExpiredTokenIsUnauthenticatedEvenMidConnection(t *testing.T) {
	priv, pub := keyPair(t)
	now := t0
	v := verifier(t, &now, pub)
	p, err := v.Verify(issue(t, priv, "acme", "publish:*"))
	if err != nil {
		t.Fatal(err)
	}
	now = t0.Add(2 * time.Hour)
	if err := p.Allow(ActionPublish, "acme", "a", "b"); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("expired mid-connection: %v", err)
	}
	if _, err := v.Verify(issue(t, priv, "acme", "publish:*")); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("expired at verification: %v", err)
	}
}

func TestBadTokensAreUnauthenticated(t *testing.T) {
	priv, pub := keyPair(t)
	other, _ := keyPair(t)
	now := t0
	v := verifier(t, &now, pub)
	good := issue(t, priv, "acme", "publish:*")
	parts := strings.Split(good, ".")
	claims, _ := base64.RawURLEncoding.DecodeString(parts[1])
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(claims), "acme", "evil", 1))) + "." + parts[2]
	badSig := parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(make([]byte, 64))
	cases := map[string]string{
		"empty":         "",
		"garbage":       "not-a-token",
		"unknown key":   issue(t, other, "acme", "publish:*"),
		"tampered":      tampered,
		"bad signature": badSig,
		"none alg":      "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + parts[1] + ".",
	}
	for name, tok := range cases {
		if _, err := v.Verify(tok); !errors.Is(err, ErrUnauthenticated) {
			t.Fatalf("%s: got %v", name, err)
		}
	}
}

func TestKeysRotate(t *testing.T) {
	oldPriv, oldPub := keyPair(t)
	newPriv, newPub := keyPair(t)
	now := t0
	both := verifier(t, &now, oldPub, newPub)
	for _, priv := range []ed25519.PrivateKey{oldPriv, newPriv} {
		if _, err := both.Verify(issue(t, priv, "acme", "publish:*")); err != nil {
			t.Fatalf("during rotation: %v", err)
		}
	}
	onlyNew := verifier(t, &now, newPub)
	if _, err := onlyNew.Verify(issue(t, oldPriv, "acme", "publish:*")); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("old key after rotation: %v", err)
	}
}

// A running verifier's keys change with SetKeys: tokens of a key added
// verify from then on, and a principal whose key was removed is refused as
// unauthenticated at its next check (its connection closes), as are new
// tokens of that key. An empty set is refused and keeps the old keys.
func TestKeysChangeWhileTheVerifierServes(t *testing.T) {
	oldPriv, oldPub := keyPair(t)
	newPriv, newPub := keyPair(t)
	now := t0
	v := verifier(t, &now, oldPub)
	p, err := v.Verify(issue(t, oldPriv, "acme", "publish:*"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(issue(t, newPriv, "acme", "publish:*")); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("a key not yet trusted: %v", err)
	}
	if err := v.SetKeys(nil); err == nil {
		t.Fatal("an empty key set was taken")
	}
	if err := p.Allow(ActionPublish, "acme", "a", "b"); err != nil {
		t.Fatalf("after a refused empty set: %v", err)
	}
	if err := v.SetKeys([]ed25519.PublicKey{oldPub, newPub}); err != nil {
		t.Fatal(err)
	}
	pNew, err := v.Verify(issue(t, newPriv, "acme", "publish:*"))
	if err != nil {
		t.Fatalf("a key added: %v", err)
	}
	if err := v.SetKeys([]ed25519.PublicKey{newPub}); err != nil {
		t.Fatal(err)
	}
	if err := p.Allow(ActionPublish, "acme", "a", "b"); !errors.Is(err, ErrUnauthenticated) || !strings.Contains(err.Error(), "no longer trusted") {
		t.Fatalf("a principal of a removed key: %v", err)
	}
	if _, err := v.Verify(issue(t, oldPriv, "acme", "publish:*")); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("a new token of a removed key: %v", err)
	}
	if err := pNew.Allow(ActionPublish, "acme", "a", "b"); err != nil {
		t.Fatalf("a principal of a kept key: %v", err)
	}
}

func TestKeysRoundTripThroughPEM(t *testing.T) {
	priv, pub := keyPair(t)
	pb, _ := EncodePrivateKey(priv)
	ub, _ := EncodePublicKey(pub)
	priv2, err := ParsePrivateKey(pb)
	if err != nil || !priv2.Equal(priv) {
		t.Fatalf("private key: %v", err)
	}
	keys, err := ParsePublicKeys(append(ub, ub...))
	if err != nil || len(keys) != 2 || !keys[0].Equal(pub) {
		t.Fatalf("public keys: %v", err)
	}
}

func TestPermissionGrammar(t *testing.T) {
	for _, bad := range []string{"", "publish", "publish:", "steal:*", ":x"} {
		if _, err := ParsePermission(bad); !errors.Is(err, ErrBadPermission) {
			t.Fatalf("%q parsed: %v", bad, err)
		}
	}
	cases := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "a/b", true}, {"orders/*", "orders/x", true}, {"orders/*", "ordersx/y", false},
		{"*/created", "orders/created", true}, {"o*s/c*d", "orders/created", true},
		{"orders/created", "orders/created", true}, {"orders/created", "orders/create", false}, {"a*", "b", false},
	}
	for _, c := range cases {
		if got := match(c.pattern, c.s); got != c.want {
			t.Fatalf("match(%q, %q) = %v", c.pattern, c.s, got)
		}
	}
}

func TestAPublishQuotaRefusesOneTenantWhileAnotherKeepsItsRate(t *testing.T) {
	now := t0
	q := NewQuotas(Limits{}, map[string]Limits{"small": {PublishBytesPerSec: 1000}}, nil, func() time.Time { return now })
	if err := q.AdmitPublish("small", 800); err != nil {
		t.Fatal(err)
	}
	err := q.AdmitPublish("small", 300)
	var qe *QuotaError
	if !errors.As(err, &qe) || qe.Limit != "publish_bytes_per_second" || !errors.Is(err, ErrQuotaExceeded) {
		t.Fatalf("over the rate: %v", err)
	}
	for range 100 {
		if err := q.AdmitPublish("big", 1<<20); err != nil {
			t.Fatalf("an unlimited tenant was refused: %v", err)
		}
	}
	now = now.Add(300 * time.Millisecond)
	if err := q.AdmitPublish("small", 300); err != nil {
		t.Fatalf("after refill: %v", err)
	}
	now = now.Add(10 * time.Second)
	if err := q.AdmitPublish("small", 5000); err != nil {
		t.Fatalf("a large publish into a full bucket: %v", err)
	}
	if err := q.AdmitPublish("small", 1); err == nil {
		t.Fatal("the bucket was not left in debt")
	}
}

func TestConnectionAndStoredQuotas(t *testing.T) {
	stored := map[string]int64{"acme": 900}
	q := NewQuotas(Limits{Connections: 2, StoredBytes: 1000}, nil, func(t string) int64 { return stored[t] }, nil)
	r1, err := q.Connect("acme")
	if err != nil {
		t.Fatal(err)
	}
	r2, _ := q.Connect("acme")
	if _, err := q.Connect("acme"); err == nil || !strings.Contains(err.Error(), "connections") {
		t.Fatalf("third connection: %v", err)
	}
	r1()
	r1() // release is idempotent
	if _, err := q.Connect("acme"); err != nil {
		t.Fatalf("after a release: %v", err)
	}
	r2()
	if err := q.AdmitPublish("acme", 10); err != nil {
		t.Fatal(err)
	}
	stored["acme"] = 1000
	var qe *QuotaError
	if err := q.AdmitPublish("acme", 10); !errors.As(err, &qe) || qe.Limit != "stored_bytes" {
		t.Fatalf("over stored bytes: %v", err)
	}
}
