package main

import (
	"strings"
	"testing"
)

// felix cache create --consistency quorum asks for a Quorum cache, and
// felix cache describe shows the setting (a broker alone holds one
// replica, so it acknowledges as at Leader; the setting is kept).
func TestCacheCreateTakesAConsistencyAndDescribeShowsIt(t *testing.T) {
	addr := cliBroker(t)
	run := func(args ...string) string {
		t.Helper()
		out, err := runCLI(t, append([]string{args[0], args[1], "--addr", addr}, args[2:]...)...)
		if err != nil {
			t.Fatalf("felix %s: %v", strings.Join(args, " "), err)
		}
		return out
	}
	contains(t, run("cache", "create", "acme/prod/q", "--consistency", "quorum"), "created cache acme/prod/q", "consistency Quorum")
	contains(t, run("cache", "describe", "acme/prod/q"), "cache acme/prod/q: shards 1", "consistency Quorum", "shard 0: leader")
	contains(t, run("cache", "create", "acme/prod/l"), "consistency Leader")
	contains(t, run("cache", "describe", "acme/prod/l"), "consistency Leader")
}
