//go:build unix

package main

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
)

// SIGHUP reloads the key files: after it, a token of the key the files now
// hold is accepted.
func TestSIGHUPReloadsTheKeyFiles(t *testing.T) {
	b, _, newKey, keyFile, newPub := startWithKeyFile(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watchReloads(ctx, b.reloads)
	copyFile(t, newPub, keyFile)
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	// The reload runs on the watcher's goroutine: wait for its effect.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := dialAs(t, b.Addr().String(), newKey)
		if err == nil {
			c.Close()
			return
		}
		if !errors.Is(err, client.ErrUnauthenticated) || time.Now().After(deadline) {
			t.Fatalf("after SIGHUP: %v", err)
		}
	}
}
