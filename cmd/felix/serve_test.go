package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
)

func TestSettingsComeFromFlagThenEnvThenFileThenDefault(t *testing.T) {
	path := filepath.Join(t.TempDir(), "felix.toml")
	os.WriteFile(path, []byte("addr = \"10.0.0.1:1\"\nfsync = \"none\"\nidle-timeout = \"1m\"\n"), 0o644)
	env := map[string]string{"FELIX_ADDR": "10.0.0.2:2", "FELIX_IDLE_TIMEOUT": "2m"}
	st := serveSettings()
	err := st.resolve(path, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, map[string]string{"addr": "10.0.0.3:3"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{
		"addr":         {"10.0.0.3:3", "flag --addr"},
		"idle-timeout": {"2m", "env FELIX_IDLE_TIMEOUT"},
		"fsync":        {"none", "file " + path},
		"io":           {"auto", "default"},
	}
	for key, w := range want {
		if s := st.byKey[key]; s.value != w[0] || s.source != w[1] {
			t.Fatalf("%s = %q from %q, want %q from %q", key, s.value, s.source, w[0], w[1])
		}
	}
	var sb strings.Builder
	st.print(&sb)
	contains(t, sb.String(), "10.0.0.3:3", "flag --addr", "env FELIX_IDLE_TIMEOUT")
	os.WriteFile(path, []byte("adress = \"x\"\n"), 0o644)
	if err := serveSettings().resolve(path, osEnv, nil); err == nil || !strings.Contains(err.Error(), "adress") {
		t.Fatalf("a misspelled key: %v", err)
	}
}

func TestBadSettingsAreRefusedBeforeAnythingStarts(t *testing.T) {
	st := serveSettings()
	st.resolve("", func(string) (string, bool) { return "", false }, map[string]string{"fsync": "sometimes", "io": "telepathy", "event-loops": "-1", "dead-letter-max-age": "-1h"})
	_, err := parseServeConfig(st)
	for _, key := range []string{"--fsync", "--io", "--event-loops", "--dead-letter-max-age"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Fatalf("%s not named: %v", key, err)
		}
	}
}

// --event-loops fixes the number of loops; 0 leaves it to the server.
func TestEventLoopsAreASetting(t *testing.T) {
	for env, want := range map[string]int{"": 0, "3": 3} {
		st := serveSettings()
		lookup := func(k string) (string, bool) { return env, k == "FELIX_EVENT_LOOPS" && env != "" }
		if err := st.resolve("", lookup, nil); err != nil {
			t.Fatal(err)
		}
		cfg, err := parseServeConfig(st)
		if err != nil || cfg.eventLoops != want {
			t.Fatalf("FELIX_EVENT_LOOPS=%q: %d %v, want %d", env, cfg.eventLoops, err, want)
		}
	}
}

// --dead-letter-max-age bounds how long groups keep a dead letter; 0
// keeps them until redriven.
func TestDeadLetterMaxAgeIsASetting(t *testing.T) {
	for env, want := range map[string]time.Duration{"": 0, "336h": 336 * time.Hour} {
		st := serveSettings()
		lookup := func(k string) (string, bool) { return env, k == "FELIX_DEAD_LETTER_MAX_AGE" && env != "" }
		if err := st.resolve("", lookup, nil); err != nil {
			t.Fatal(err)
		}
		cfg, err := parseServeConfig(st)
		if err != nil || cfg.deadLetterMaxAge != want {
			t.Fatalf("FELIX_DEAD_LETTER_MAX_AGE=%q: %v %v, want %v", env, cfg.deadLetterMaxAge, err, want)
		}
	}
}

func TestServeRunsABrokerWithAdminEndpointsAndStopsCleanly(t *testing.T) {
	flags := map[string]string{"addr": "127.0.0.1:0", "admin-addr": "127.0.0.1:0", "data": t.TempDir(), "log-format": "text", "log-level": "error"}
	cfg := configOf(t, flags)
	b, err := startBroker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"/healthz": "ok", "/readyz": "ready", "/metrics": "felix_build_info"} {
		resp, err := http.Get("http://" + b.AdminAddr() + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Fatalf("%s: %d %q", path, resp.StatusCode, body)
		}
	}
	ctx := context.Background()
	cl, err := client.Dial(ctx, b.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := client.Stream{Tenant: "t", Namespace: "n", Name: "s"}
	if _, err := cl.CreateStream(ctx, s, client.StreamConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Publish(ctx, s, []byte("x")); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	if err := b.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}
