package main

import (
	"strconv"
	"strings"
	"testing"
)

// mustAt runs felix commands at the broker at addr (the command and its
// subcommand, --addr, the rest) and fails the test on an error.
func mustAt(t *testing.T, addr string) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		out, err := runCLI(t, append([]string{args[0], args[1], "--addr", addr}, args[2:]...)...)
		if err != nil {
			t.Fatalf("felix %s: %v", strings.Join(args, " "), err)
		}
		return out
	}
}

func TestStreamDescribeSaysEveryShardsPlaceAndWhatItHolds(t *testing.T) {
	must := mustAt(t, cliBroker(t))
	must("stream", "create", "acme/prod/orders", "--shards", "2")
	must("pub", "acme/prod/orders", "a", "b", "c")
	out := must("stream", "describe", "acme/prod/orders")
	contains(t, out, "stream acme/prod/orders", "shards 2", "SHARD", "LEADER", "REPLICAS", "HELD", "2 shards")
	held, shards := 0, 0
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) != 7 || (f[0] != "0" && f[0] != "1") {
			continue
		}
		shards++
		n, err := strconv.Atoi(f[6])
		if err != nil || f[1] == "-" || f[2] == "-" {
			t.Fatalf("shard line %q: want its leader, its replicas and what it holds\n%s", l, out)
		}
		held += n
	}
	if shards != 2 || held != 3 {
		t.Fatalf("%d shard lines holding %d records, want 2 holding the 3 published\n%s", shards, held, out)
	}
}
