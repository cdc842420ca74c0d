package main

import (
	"bytes"
	"context"
	"sync"
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

// lockedBuffer is a log a test reads while the broker's goroutines (the
// cluster's, in the background) write to it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
