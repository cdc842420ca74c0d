package main

import (
	"fmt"
	"strings"
	"testing"
)

// The group commands read every shard of a stream: a poll takes records
// from each, a describe shows each; a command on one shard's state (ack)
// of a stream of several asks for --shard rather than guessing shard 0.
func TestTheGroupCommandsReadEveryShard(t *testing.T) {
	addr := cliBroker(t)
	must := mustAt(t, addr)
	must("stream", "create", "acme/prod/tasks", "--shards", "3")
	for i := range 9 {
		must("pub", "acme/prod/tasks", fmt.Sprint("t", i), "--key", fmt.Sprint("k", i))
	}
	out := must("group", "poll", "acme/prod/tasks", "workers", "--max", "20")
	shards := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(l, "[") {
			shards[l[1:strings.IndexByte(l, ':')]] = true
		}
	}
	if n := strings.Count(out, "\n"); n != 9 || len(shards) < 2 {
		t.Fatalf("a poll of every shard printed %d records from shards %v, want the 9 from several:\n%s", n, shards, out)
	}
	contains(t, must("group", "describe", "acme/prod/tasks", "workers"), "on acme/prod/tasks shard 0", "on acme/prod/tasks shard 2")
	_, err := runCLI(t, "group", "ack", "acme/prod/tasks", "workers", "0", "--addr", addr)
	if err == nil || !strings.Contains(err.Error(), "has 3 shards") || !strings.Contains(err.Error(), "--shard") {
		t.Fatalf("an ack without --shard on a stream of 3: %v, want to be asked for --shard", err)
	}
}
