package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/felixbroker/felix/client"
)

func TestTheGroupCommands(t *testing.T) {
	addr := cliBroker(t)
	must := func(args ...string) string {
		t.Helper()
		out, err := runCLI(t, append(args, "--addr", addr)...)
		if err != nil {
			t.Fatalf("felix %s: %v", strings.Join(args, " "), err)
		}
		return out
	}
	must("stream", "create", "acme/prod/jobs")
	must("pub", "acme/prod/jobs", "resize", "crop", "poison")
	contains(t, must("group", "poll", "acme/prod/jobs", "workers", "--max", "2"), "[0:0] resize", "[0:1] crop")
	contains(t, must("group", "describe", "acme/prod/jobs", "workers"),
		"cursor           0", "in flight        2", "lag              3", "retention skips  0")
	contains(t, must("group", "ack", "acme/prod/jobs", "workers", "0", "1"), "2 applied")
	// The last record fails every delivery: five nacks make it a dead
	// letter (the broker's default most deliveries).
	for range 5 {
		contains(t, must("group", "poll", "acme/prod/jobs", "workers"), "poison")
		must("group", "ack", "acme/prod/jobs", "workers", "2", "--nack")
	}
	contains(t, must("group", "dead", "acme/prod/jobs", "workers"), "OFFSET", "2  ", "max deliveries reached")
	contains(t, must("group", "describe", "acme/prod/jobs", "workers"), "cursor           3", "dead letters     1", "owed             0")
	contains(t, must("group", "list", "acme/prod/jobs"), "SHARD", "0      workers", "3")
	contains(t, must("group", "list", "acme/prod/jobs", "--shard", "0"), "workers")
	contains(t, must("group", "redrive", "acme/prod/jobs", "workers", "2", "7"), "1 redriven", "not dead letters: [7]")
	contains(t, must("group", "poll", "acme/prod/jobs", "workers", "--ack", "--json"), `"offset":2`, `"value":"poison"`, `"deliveries":1`)
	contains(t, must("group", "describe", "acme/prod/jobs", "workers", "--json"), `"DeadLetters": 0`, `"Acked": 3`)
	must("pub", "acme/prod/jobs", "late")
	contains(t, must("group", "poll", "acme/prod/jobs", "workers"), "[0:3] late")
	_, err := runCLI(t, "group", "ack", "acme/prod/jobs", "workers", "3", "--consumer", "someone-else", "--addr", addr)
	if !errors.Is(err, client.ErrClaimNotHeld) {
		t.Fatalf("another consumer's ack of felix-cli's claim: %v", err)
	}
}
