package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/felixbroker/felix/auth"
	"github.com/felixbroker/felix/client"
)

// dialAs dials addr with a token that key signs.
func dialAs(t *testing.T, addr string, key ed25519.PrivateKey) (*client.Client, error) {
	t.Helper()
	tok, err := auth.Issue(key, "acme", "test", []string{"*:n/*"}, time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return client.Dial(context.Background(), addr, client.WithToken(tok))
}

// Reloading the --auth-keys files makes the broker trust exactly the keys
// they hold now: a connection whose key was removed is refused at its next
// request, a new token of that key is refused, a key added is trusted; a
// file that no longer holds a key is refused and the keys stay.
func TestReloadingTheKeyFilesChangesTheTrustedKeys(t *testing.T) {
	b, oldKey, newKey, keyFile, newPub := startWithKeyFile(t)
	addr := b.Addr().String()
	ctx := context.Background()
	s := client.Stream{Tenant: "acme", Namespace: "n", Name: "s"}
	c, err := dialAs(t, addr, oldKey)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CreateStream(ctx, s, client.StreamConfig{InMemory: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := dialAs(t, addr, newKey); !errors.Is(err, client.ErrUnauthenticated) {
		t.Fatalf("a key not in the files yet: %v", err)
	}

	copyFile(t, newPub, keyFile)
	if err := reloadAll(b.reloads); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Publish(ctx, s, []byte("x")); !errors.Is(err, client.ErrUnauthenticated) {
		t.Fatalf("a connection of the removed key: %v", err)
	}
	if _, err := dialAs(t, addr, oldKey); !errors.Is(err, client.ErrUnauthenticated) {
		t.Fatalf("a new token of the removed key: %v", err)
	}
	n, err := dialAs(t, addr, newKey)
	if err != nil {
		t.Fatalf("the key added: %v", err)
	}
	defer n.Close()
	if _, err := n.Publish(ctx, s, []byte("y")); err != nil {
		t.Fatal(err)
	}

	if err := os.WriteFile(keyFile, []byte("not a key\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := reloadAll(b.reloads); err == nil {
		t.Fatal("a file without a key was taken")
	}
	if _, err := n.Publish(ctx, s, []byte("z")); err != nil {
		t.Fatalf("after a refused reload: %v", err)
	}
}

// startWithKeyFile starts a broker trusting the one key in keyFile
// (oldKey's), and writes a second pair whose public key is in newPub.
func startWithKeyFile(t *testing.T) (b *served, oldKey, newKey ed25519.PrivateKey, keyFile, newPub string) {
	t.Helper()
	dir := t.TempDir()
	oldKey, keyFile = writeKeyPair(t, dir, "trusted")
	newKey, newPub = writeKeyPair(t, dir, "next")
	var log bytes.Buffer
	return startSecured(t, map[string]string{"auth-keys": keyFile}, &log), oldKey, newKey, keyFile, newPub
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Reloading the --tls-cert and --tls-key files serves the renewed
// certificate to new connections while an open one goes on; a pair that
// no longer loads keeps the old certificate.
func TestReloadingTheCertificateServesTheRenewedOne(t *testing.T) {
	dir, renewed := t.TempDir(), t.TempDir()
	certFile, keyFile, oldPool := writeCert(t, dir)
	newCert, newKey, newPool := writeCert(t, renewed)
	var log bytes.Buffer
	b := startSecured(t, map[string]string{"tls-addr": "127.0.0.1:0", "tls-cert": certFile, "tls-key": keyFile}, &log)
	addr := b.TLSAddr().String()
	ctx := context.Background()
	dial := func(pool *x509.CertPool) (*client.Client, error) {
		return client.Dial(ctx, addr, client.WithTLS(&tls.Config{RootCAs: pool}))
	}
	open, err := dial(oldPool)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	s := client.Stream{Tenant: "acme", Namespace: "n", Name: "s"}
	if _, err := open.CreateStream(ctx, s, client.StreamConfig{InMemory: true}); err != nil {
		t.Fatal(err)
	}

	copyFile(t, newCert, certFile)
	copyFile(t, newKey, keyFile)
	if err := reloadAll(b.reloads); err != nil {
		t.Fatal(err)
	}
	if _, err := dial(oldPool); err == nil {
		t.Fatal("a new connection still got the old certificate")
	}
	c, err := dial(newPool)
	if err != nil {
		t.Fatalf("the renewed certificate: %v", err)
	}
	defer c.Close()
	if _, err := open.Publish(ctx, s, []byte("x")); err != nil {
		t.Fatalf("the connection opened before the reload: %v", err)
	}

	if err := os.WriteFile(keyFile, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := reloadAll(b.reloads); err == nil {
		t.Fatal("a key that does not load was taken")
	}
	if c, err := dial(newPool); err != nil {
		t.Fatalf("after a refused reload: %v", err)
	} else {
		c.Close()
	}
}

// A reload resolves the settings again: a key file the config file names
// since startup is read and trusted; settings naming no file keep the
// keys (a running broker does not turn auth off).
func TestAReloadReadsTheConfigFilesKeyListAgain(t *testing.T) {
	t.Setenv("FELIX_AUTH_KEYS", "") // restored after; unset now, so the config file decides
	os.Unsetenv("FELIX_AUTH_KEYS")
	dir := t.TempDir()
	_, pubA := writeKeyPair(t, dir, "a")
	keyB, pubB := writeKeyPair(t, dir, "b")
	cfgFile := filepath.Join(dir, "felix.toml")
	writeConfig := func(keys string) {
		t.Helper()
		if err := os.WriteFile(cfgFile, []byte("auth-keys = \""+keys+"\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeConfig(pubA)
	c := &serveCmd{Config: cfgFile}
	files, err := c.keyFilesNow()
	if err != nil || len(files) != 1 || files[0] != pubA {
		t.Fatalf("files at start %v (%v)", files, err)
	}
	keys, err := auth.LoadPublicKeys(files...)
	if err != nil {
		t.Fatal(err)
	}
	v, err := auth.NewVerifier(keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	k := &trustedKeys{files: files, refresh: c.keyFilesNow, v: v, log: slog.New(slog.DiscardHandler)}
	tokB, err := auth.Issue(keyB, "acme", "test", []string{"*:n/*"}, time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(tokB); err == nil {
		t.Fatal("a key the config file does not name yet was trusted")
	}
	writeConfig(pubA + "," + pubB)
	if err := k.reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(tokB); err != nil {
		t.Fatalf("the key file the config file added: %v", err)
	}
	writeConfig("")
	if err := k.reload(); err == nil {
		t.Fatal("settings naming no key file were taken")
	}
	if _, err := v.Verify(tokB); err != nil {
		t.Fatalf("after a refused reload: %v", err)
	}
}
