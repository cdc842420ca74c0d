package e2e

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/felixbroker/felix/auth"
	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/netio"
	"github.com/felixbroker/felix/segment/vfs"
)

// clock is a clock a test moves; it starts at the real time, so tokens
// issued on it look ordinary.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(time.Now().UnixNano())
	return c
}

func (c *clock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// key is a signing key; tokens are issued on the clock.
type key struct {
	t     testing.TB
	priv  ed25519.PrivateKey
	clock *clock
}

func newKey(t testing.TB, c *clock) *key {
	t.Helper()
	priv, err := auth.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return &key{t: t, priv: priv, clock: c}
}

func (k *key) public() ed25519.PublicKey { return k.priv.Public().(ed25519.PublicKey) }

// token issues a token valid for an hour.
func (k *key) token(tenant string, perms ...string) string {
	return k.tokenFor(time.Hour, tenant, perms...)
}

func (k *key) tokenFor(ttl time.Duration, tenant string, perms ...string) string {
	k.t.Helper()
	tok, err := auth.Issue(k.priv, tenant, "e2e", perms, ttl, k.clock.Now())
	if err != nil {
		k.t.Fatal(err)
	}
	return tok
}

// securedBroker is a broker with auth on (trusting keys, on the clock) and
// a TLS listener beside the plain one.
type securedBroker struct {
	*broker
	pool *x509.CertPool
}

// ingress names the two ways into a broker.
var ingresses = []string{"tcp", "tls"}

func startSecured(t *testing.T, c *clock, tune func(*netio.Config), keys ...*key) *securedBroker {
	t.Helper()
	pubs := make([]ed25519.PublicKey, len(keys))
	for i, k := range keys {
		pubs[i] = k.public()
	}
	v, err := auth.NewVerifier(pubs, c.Now)
	if err != nil {
		t.Fatal(err)
	}
	cert, pool := selfSigned(t)
	b := startBrokerWith(t, vfs.NewMem(), "/data", func(cfg *netio.Config) {
		cfg.Authenticator = netio.NewTokenAuthenticator(v)
		cfg.TLSAddr = "127.0.0.1:0"
		cfg.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
		if tune != nil {
			tune(cfg)
		}
	})
	return &securedBroker{broker: b, pool: pool}
}

// dialOn connects through ingress ("tcp" or "tls") with a token.
func (b *securedBroker) dialOn(t testing.TB, ingress, token string, opts ...client.Option) (*client.Client, error) {
	t.Helper()
	addr := b.addr()
	opts = append(opts, client.WithToken(token))
	if ingress == "tls" {
		addr = b.srv.TLSAddr().String()
		opts = append(opts, client.WithTLS(&tls.Config{RootCAs: b.pool}))
	}
	c, err := client.Dial(testCtx(t), addr, opts...)
	if err == nil {
		t.Cleanup(func() { _ = c.Close() })
	}
	return c, err
}

func (b *securedBroker) mustDialOn(t testing.TB, ingress, token string, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := b.dialOn(t, ingress, token, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// selfSigned makes a certificate for 127.0.0.1 and a pool that trusts it.
func selfSigned(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "felix e2e"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: k, Leaf: leaf}, pool
}

// nextOffset is where shard 0 of a stream stands, asked with a token that
// may describe it: how a test sees that a refused record did not land.
func nextOffset(t testing.TB, c *client.Client, s client.Stream) int64 {
	t.Helper()
	info, err := c.DescribeStream(testCtx(t), s)
	if err != nil {
		t.Fatal(err)
	}
	return info.Shards[0].NextOffset
}

// wantCode checks that err carries the code's sentinel.
func wantCode(t testing.TB, what string, err, sentinel error) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("%s: got %v, want %v", what, err, sentinel)
	}
}

// serverError is the broker's refusal inside err.
func serverError(t testing.TB, err error) *client.ServerError {
	t.Helper()
	var se *client.ServerError
	if !errors.As(err, &se) {
		t.Fatalf("not a broker refusal: %v", err)
	}
	return se
}

// stream is a stream of tenant acme named after the test.
func testStream(t testing.TB, namespace string) client.Stream {
	return client.Stream{Tenant: "acme", Namespace: namespace, Name: "s" + sanitize(t.Name())}
}
