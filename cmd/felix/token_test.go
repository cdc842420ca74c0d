package main

import (
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/felixbroker/felix/auth"
)

func TestTokenKeygenThenIssueMakesAVerifiableToken(t *testing.T) {
	dir := t.TempDir()
	out, err := runCLI(t, "token", "keygen", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	contains(t, out, "key id", "felix-signing.pub")
	if _, err := runCLI(t, "token", "keygen", "--out", dir); err == nil {
		t.Fatal("keygen overwrote an existing key")
	}
	tok, err := runCLI(t, "token", "issue", "--key", filepath.Join(dir, "felix-signing.key"),
		"--tenant", "acme", "--perm", "publish:orders/*", "--perm", "subscribe:*", "--ttl", "1h")
	if err != nil {
		t.Fatal(err)
	}
	pubs, err := auth.LoadPublicKeys(filepath.Join(dir, "felix-signing.pub"))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := auth.NewVerifier([]ed25519.PublicKey(pubs), time.Now)
	p, err := v.Verify(strings.TrimSpace(tok))
	if err != nil {
		t.Fatal(err)
	}
	if p.Tenant != "acme" || p.Allow(auth.ActionPublish, "acme", "orders", "x") != nil {
		t.Fatalf("principal %+v", p)
	}
	info, _ := os.Stat(filepath.Join(dir, "felix-signing.key"))
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("private key mode %v", info.Mode())
	}
	if _, err := runCLI(t, "token", "issue", "--key", filepath.Join(dir, "felix-signing.key"), "--tenant", "acme", "--perm", "steal:*"); err == nil {
		t.Fatal("a bad permission was issued")
	}
}
