package main

import (
	"context"
	"testing"
)

// configOf is the serveConfig felix serve would run with these flags and no
// environment or config file.
func configOf(t *testing.T, flags map[string]string) serveConfig {
	t.Helper()
	st := serveSettings()
	if err := st.resolve("", noEnv, flags); err != nil {
		t.Fatal(err)
	}
	cfg, err := parseServeConfig(st)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// startServed starts the broker cfg describes; it stops when the test
// ends, and a failed stop fails the test.
func startServed(t *testing.T, cfg serveConfig) *served {
	t.Helper()
	b, err := startBroker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return b
}
