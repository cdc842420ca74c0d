package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/felixbroker/felix/auth"
	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio"
)

func noEnv(string) (string, bool) { return "", false }

// The quota defaults come from flag, environment, a top-level key or the
// file's [quotas.default], in that order; [quotas.tenants.NAME] sets one
// tenant, taking what it leaves out from the default.
func TestQuotasComeFromSettingsAndTheConfigFilesTables(t *testing.T) {
	path := filepath.Join(t.TempDir(), "felix.toml")
	os.WriteFile(path, []byte(`addr = "127.0.0.1:0"
[quotas.default]
publish_bytes_per_sec = 1000
connections = 7
stored_bytes = 5000
[quotas.tenants.acme]
connections = 50
[quotas.tenants.globex]
publish_bytes_per_sec = 0
`), 0o644)
	env := map[string]string{"FELIX_QUOTA_STORED_BYTES": "9000"}
	st := serveSettings()
	if err := st.resolve(path, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, map[string]string{"quota-connections": "3"}); err != nil {
		t.Fatal(err)
	}
	tenants, err := loadQuotaFile(st, path)
	if err != nil {
		t.Fatal(err)
	}
	sec, err := parseSecurity(st)
	if err != nil {
		t.Fatal(err)
	}
	if want := (auth.Limits{PublishBytesPerSec: 1000, Connections: 3, StoredBytes: 9000}); sec.quotaDefault != want {
		t.Fatalf("default %+v, want %+v", sec.quotaDefault, want)
	}
	if s := st.byKey["quota-publish-bytes-per-sec"].source; !strings.Contains(s, "[quotas.default]") {
		t.Fatalf("source %q", s)
	}
	if got := tenants["acme"].over(sec.quotaDefault); got != (auth.Limits{PublishBytesPerSec: 1000, Connections: 50, StoredBytes: 9000}) {
		t.Fatalf("acme %+v", got)
	}
	if got := tenants["globex"].over(sec.quotaDefault); got.PublishBytesPerSec != 0 || got.Connections != 3 {
		t.Fatalf("globex %+v", got)
	}
	os.WriteFile(path, []byte("[quotas.tenants.acme]\nconnectoins = 5\n"), 0o644)
	if _, err := loadQuotaFile(serveSettings(), path); err == nil || !strings.Contains(err.Error(), "connectoins") {
		t.Fatalf("a misspelled quota key: %v", err)
	}
}

func TestATLSAddressWithoutACertificateIsRefused(t *testing.T) {
	st := serveSettings()
	st.resolve("", noEnv, map[string]string{"tls-addr": "127.0.0.1:0"})
	if _, err := parseServeConfig(st); err == nil || !strings.Contains(err.Error(), "--tls-cert") {
		t.Fatalf("got %v", err)
	}
}

// startSecured starts a broker from settings, logging to log (which the
// broker's goroutines write to while it runs: a test that reads it passes
// a lockedBuffer).
func startSecured(t *testing.T, flags map[string]string, log io.Writer) *served {
	t.Helper()
	flags["addr"], flags["admin-addr"], flags["data"] = "127.0.0.1:0", "", ""
	cfg := configOf(t, flags)
	cfg.logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelInfo}))
	b, err := startBroker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Stop(context.Background()) })
	return b
}

// With no keys a broker serves everyone and says so loudly.
func TestServeWithoutKeysWarnsThatAuthIsOff(t *testing.T) {
	var log lockedBuffer
	startSecured(t, map[string]string{}, &log)
	if !strings.Contains(log.String(), "level=WARN msg=\"AUTH IS OFF") {
		t.Fatalf("no warning that auth is off in:\n%s", log.String())
	}
}

// With --auth-keys (two files: one key rotating in) and a TLS listener, a
// token signed by either key works over TLS, and no token is refused.
func TestServeWithAuthKeysAndTLS(t *testing.T) {
	dir := t.TempDir()
	oldKey, oldPub := writeKeyPair(t, dir, "old")
	newKey, newPub := writeKeyPair(t, dir, "new")
	certFile, keyFile, pool := writeCert(t, dir)
	var log lockedBuffer
	b := startSecured(t, map[string]string{"auth-keys": oldPub + "," + newPub, "tls-addr": "127.0.0.1:0",
		"tls-cert": certFile, "tls-key": keyFile}, &log)
	if strings.Contains(log.String(), "AUTH IS OFF") {
		t.Fatal("warned that auth is off with keys configured")
	}
	ctx := context.Background()
	addr := b.TLSAddr().String()
	if _, err := client.Dial(ctx, addr, client.WithTLS(&tls.Config{RootCAs: pool})); !errors.Is(err, client.ErrUnauthenticated) {
		t.Fatalf("no token: %v", err)
	}
	s := client.Stream{Tenant: "acme", Namespace: "n", Name: "s"}
	for i, key := range []ed25519.PrivateKey{oldKey, newKey} {
		tok, err := auth.Issue(key, "acme", "test", []string{"*:n/*"}, time.Hour, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		c, err := client.Dial(ctx, addr, client.WithTLS(&tls.Config{RootCAs: pool}), client.WithToken(tok))
		if err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
		if i == 0 {
			if _, err := c.CreateStream(ctx, s, client.StreamConfig{InMemory: true}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.Publish(ctx, s, []byte("x")); err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
		c.Close()
	}
}

// Quotas reach the server with the engine's stored bytes behind them.
func TestQuotasAreConfiguredOnTheServer(t *testing.T) {
	e, err := engine.Open(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var cfg netio.Config
	sec := securityConfig{quotaDefault: auth.Limits{StoredBytes: 1}}
	if _, err := sec.configure(&cfg, e, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if cfg.Quotas == nil || cfg.Authenticator != nil {
		t.Fatalf("quotas %v, authenticator %v", cfg.Quotas, cfg.Authenticator)
	}
	cfg = netio.Config{}
	if _, err := (securityConfig{}).configure(&cfg, e, slog.New(slog.DiscardHandler)); err != nil || cfg.Quotas != nil {
		t.Fatalf("no limits set, yet quotas %v (%v)", cfg.Quotas, err)
	}
}

func writeKeyPair(t *testing.T, dir, name string) (ed25519.PrivateKey, string) {
	t.Helper()
	priv, err := auth.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := auth.EncodePublicKey(priv.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".pub")
	if err := os.WriteFile(path, pub, 0o644); err != nil {
		t.Fatal(err)
	}
	return priv, path
}

// writeCert writes a self-signed certificate for 127.0.0.1 and its key.
func writeCert(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "felix test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pemBlock("CERTIFICATE", der), 0o644)
	os.WriteFile(keyFile, pemBlock("PRIVATE KEY", kder), 0o600)
	leaf, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(leaf)
	return certFile, keyFile, pool
}

func pemBlock(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}
