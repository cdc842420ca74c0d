package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
)

// cliBroker starts a broker on a temporary data directory and returns its
// address; it stops when the test ends.
func cliBroker(t *testing.T) string {
	t.Helper()
	flags := map[string]string{"addr": "127.0.0.1:0", "admin-addr": "", "data": t.TempDir(), "log-format": "text", "log-level": "error"}
	b := startServed(t, configOf(t, flags))
	return b.Addr().String()
}

func TestTheCacheAndCounterCommands(t *testing.T) {
	addr := cliBroker(t)
	run := func(args ...string) (string, error) {
		return runCLI(t, append([]string{args[0], args[1], "--addr", addr}, args[2:]...)...)
	}
	must := func(args ...string) string {
		t.Helper()
		out, err := run(args...)
		if err != nil {
			t.Fatalf("felix %s: %v", strings.Join(args, " "), err)
		}
		return out
	}
	contains(t, must("cache", "create", "acme/prod/sessions", "--shards", "2", "--fsync", "on_commit"),
		"created cache acme/prod/sessions", "shards 2", "durable true", "OnCommit")
	contains(t, must("cache", "put", "acme/prod/sessions", "k", "v1"), `put "k" at offset 0 (new, expires never)`)
	contains(t, must("cache", "get", "acme/prod/sessions", "k", "--meta"), "offset 0  expires never", "v1")
	if _, err := run("cache", "put", "acme/prod/sessions", "k", "v2", "--if-absent"); !errors.Is(err, client.ErrPreconditionFailed) {
		t.Fatalf("--if-absent over a value: %v", err)
	}
	if _, err := run("cache", "put", "acme/prod/sessions", "k", "v2", "--if-offset", "7"); !errors.Is(err, client.ErrPreconditionFailed) {
		t.Fatalf("--if-offset at another offset: %v", err)
	}
	contains(t, must("cache", "put", "acme/prod/sessions", "k", "v2", "--if-offset", "0", "--ttl", "1h"),
		`put "k" at offset 1 (replaced a value, expires 2`)
	if _, err := run("cache", "put", "acme/prod/sessions", "k", "v3", "--if-absent", "--if-offset", "1"); err == nil {
		t.Fatal("--if-absent and --if-offset together")
	}
	contains(t, must("cache", "del", "acme/prod/sessions", "k"), `deleted "k" at offset 2`)
	contains(t, must("cache", "del", "acme/prod/sessions", "k"), `"k" held no value`)
	if _, err := run("cache", "get", "acme/prod/sessions", "k"); !errors.Is(err, errKeyNotFound) {
		t.Fatalf("get of a deleted key: %v", err)
	}

	contains(t, must("counter", "get", "acme/prod/sessions", "hits"), "0 (never written)")
	contains(t, must("counter", "add", "acme/prod/sessions", "hits", "5"), "5")
	contains(t, must("counter", "add", "acme/prod/sessions", "hits", "--", "-2"), "3")
	contains(t, must("counter", "get", "acme/prod/sessions", "hits"), "3")

	contains(t, must("cache", "drop", "acme/prod/sessions"), "dropped cache acme/prod/sessions")
	if _, err := run("cache", "get", "acme/prod/sessions", "k"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("get from a dropped cache: %v", err)
	}
}

func TestCacheWatchPrintsEachEventOnALine(t *testing.T) {
	addr := cliBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl, err := client.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ca := cl.Cache(client.CacheName{Tenant: "acme", Namespace: "prod", Name: "w"})
	if err := ca.Create(ctx, client.CacheConfig{}); err != nil {
		t.Fatal(err)
	}
	ca.Put(ctx, []byte("cfg/a"), []byte("1"))
	w, err := ca.WatchRetained(ctx, []byte("cfg/"), client.WithPrefixOnShard(0))
	if err != nil {
		t.Fatal(err)
	}
	ca.Put(ctx, []byte("cfg/b"), []byte("2"))
	ca.Delete(ctx, []byte("cfg/a"))
	var out bytes.Buffer
	watchCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- printWatch(watchCtx, w, &lineWaiter{buf: &out, lines: 4, full: stop}) }()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	contains(t, out.String(), "snapshot 0\tcfg/a\t1", "synced   1 values", "put      1\tcfg/b\t2", "delete   2\tcfg/a",
		"# stopped; resume with --from 3")
}

// lineWaiter is printWatch's output: it calls full once it has the lines
// it waits for (printWatch then stops as if interrupted).
type lineWaiter struct {
	buf   *bytes.Buffer
	lines int
	full  func()
}

func (l *lineWaiter) Write(p []byte) (int, error) {
	n, err := l.buf.Write(p)
	if strings.Count(l.buf.String(), "\n") >= l.lines {
		l.full()
	}
	return n, err
}
