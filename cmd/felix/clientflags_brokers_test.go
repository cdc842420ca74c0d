package main

import (
	"strings"
	"testing"
)

// The client commands take several brokers (--brokers, or FELIX_BROKERS)
// and use the first that answers: a dead address first is passed over;
// when none answers the error names each one tried.
func TestClientCommandsTakeSeveralBrokers(t *testing.T) {
	b := startServed(t, configOf(t, map[string]string{"addr": "127.0.0.1:0", "admin-addr": "", "data": "", "log-level": "error"}))
	dead := freeAddr(t)
	brokers := dead + "," + b.Addr().String()
	if _, err := runCLI(t, "stream", "create", "demo/several", "--no-durable", "--brokers", brokers, "--timeout", "5s"); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "pub", "demo/several", "through-the-second", "--brokers", brokers, "--timeout", "5s")
	if err != nil {
		t.Fatal(err)
	}
	contains(t, out, "shard 0 offset 0")
	t.Setenv("FELIX_BROKERS", brokers)
	out, err = runCLI(t, "sub", "demo/several", "--from", "earliest", "--count", "1", "--timeout", "5s")
	if err != nil {
		t.Fatal(err)
	}
	contains(t, out, "[0:0] through-the-second")
	_, err = runCLI(t, "stream", "list", "--brokers", dead, "--timeout", "2s")
	if err == nil || !strings.Contains(err.Error(), dead) {
		t.Fatalf("with only a dead broker: %v, want an error naming %s", err, dead)
	}
}
