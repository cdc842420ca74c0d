package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Sizes and durations are written the same way in felix serve's settings
// and in the client commands' flags: 64MiB, 10GiB, 7d.
func TestSizesAndDurationsAreWrittenAlikeEverywhere(t *testing.T) {
	cfg := configOf(t, map[string]string{"data": "", "retention-max-age": "7d", "retention-max-bytes": "10GiB",
		"segment-bytes": "64MiB", "max-frame-bytes": "4MiB", "dead-letter-max-age": "14d", "idle-timeout": "1d"})
	if cfg.retention.MaxAge != 7*24*time.Hour || cfg.retention.MaxBytes != 10<<30 || cfg.segmentBytes != 64<<20 ||
		cfg.maxFrameBytes != 4<<20 || cfg.deadLetterMaxAge != 14*24*time.Hour || cfg.idleTimeout != 24*time.Hour {
		t.Fatalf("serve settings with units: %+v", cfg.retention)
	}

	addr := cliBroker(t)
	run := func(args ...string) (string, error) {
		return runCLI(t, append([]string{args[0], args[1], "--addr", addr}, args[2:]...)...)
	}
	out, err := run("stream", "create", "acme/prod/kept", "--retention-max-age", "7d", "--retention-max-bytes", "10GiB",
		"--fsync", "periodic:10ms")
	if err != nil {
		t.Fatal(err)
	}
	contains(t, out, "retention: max age 168h0m0s, max bytes 10737418240", "fsync Periodic:10ms")
	for _, bad := range [][]string{
		{"stream", "create", "acme/prod/none", "--shards", "0"},
		{"cache", "create", "acme/prod/nocache", "--shards", "0"},
		{"stream", "create", "acme/prod/bad", "--fsync", "sometimes"},
		{"stream", "create", "acme/prod/bad", "--retention-max-age", "tomorrow"},
	} {
		if _, err := run(bad...); err == nil {
			t.Errorf("felix %s was taken", strings.Join(bad, " "))
		}
	}
	dir := t.TempDir()
	if _, err := runCLI(t, "token", "keygen", "--out", dir); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(dir, "felix-signing.key")
	if _, err := runCLI(t, "token", "issue", "--key", key, "--tenant", "acme", "--perm", "publish:*", "--ttl=-1h"); err == nil ||
		!strings.Contains(err.Error(), "expired already") {
		t.Errorf("a token that would have expired already: %v", err)
	}
	if _, err := runCLI(t, "token", "issue", "--key", key, "--tenant", "acme", "--perm", "publish:*", "--ttl", "30d"); err != nil {
		t.Errorf("a token of 30 days: %v", err)
	}
}

// --print-config refuses what felix serve would refuse, after showing it.
func TestPrintConfigValidatesWhatItPrints(t *testing.T) {
	out, err := runCLI(t, "serve", "--print-config", "--data", "", "--segment-bytes", "64MiB")
	if err != nil {
		t.Fatalf("valid settings: %v", err)
	}
	contains(t, out, "SETTING", "segment-bytes", "64MiB")
	out, err = runCLI(t, "serve", "--print-config", "--data", "", "--fsync", "sometimes")
	if err == nil || !strings.Contains(err.Error(), "would not start a broker") || !strings.Contains(err.Error(), "fsync") {
		t.Fatalf("--fsync sometimes: %v", err)
	}
	contains(t, out, "sometimes") // shown, then refused
}

// A command names its stream's tenant from the --token when --tenant does
// not (a token is for one tenant): the broker then serves that tenant's.
func TestTheTenantComesFromTheTokenWhenNoneIsGiven(t *testing.T) {
	dir := t.TempDir()
	if _, err := runCLI(t, "token", "keygen", "--out", dir); err != nil {
		t.Fatal(err)
	}
	tok, err := runCLI(t, "token", "issue", "--key", filepath.Join(dir, "felix-signing.key"), "--tenant", "acme", "--perm", "*:*")
	if err != nil {
		t.Fatal(err)
	}
	b := brokerFlags{Token: strings.TrimSpace(tok)}
	if s, err := b.stream("prod/orders"); err != nil || s.Tenant != "acme" {
		t.Fatalf("with acme's token: %+v %v, want tenant acme", s, err)
	}
	b.Tenant = "other"
	if s, _ := b.stream("prod/orders"); s.Tenant != "other" {
		t.Errorf("--tenant other with acme's token: tenant %q, want other (--tenant wins)", s.Tenant)
	}
	if s, _ := (&brokerFlags{}).stream("prod/orders"); s.Tenant != "default" {
		t.Errorf("no token, no --tenant: tenant %q, want default", s.Tenant)
	}
}
