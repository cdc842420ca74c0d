package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/felixbroker/felix/client"
)

// felix sub reads every shard by default, each line naming its shard:
// keyed records spread over three shards all come back.
func TestSubReadsEveryShardAndNamesEach(t *testing.T) {
	must := mustAt(t, cliBroker(t))
	must("stream", "create", "acme/prod/orders", "--shards", "3")
	shards := map[string]bool{}
	for i := range 12 {
		out := must("pub", "acme/prod/orders", fmt.Sprint("v", i), "--key", fmt.Sprint("k", i))
		shards[strings.Fields(out)[1]] = true // "shard N offset M"
	}
	if len(shards) < 2 {
		t.Fatalf("12 keys landed on %d shard(s): the test needs them spread", len(shards))
	}
	out := must("sub", "acme/prod/orders", "--from", "earliest", "--count", "12")
	for i := range 12 {
		contains(t, out, fmt.Sprintf("key=%q v%d", fmt.Sprint("k", i), i))
	}
	for s := range shards {
		contains(t, out, "["+s+":")
	}
	one := must("sub", "acme/prod/orders", "--from", "earliest", "--count", "1", "--shard", "2")
	if !strings.HasPrefix(one, "[2:0] ") {
		t.Errorf("felix sub --shard 2 printed %q, want shard 2's first record", one)
	}
}

// --json keeps bytes that are not UTF-8: in base64, and says so.
func TestSubJSONKeepsBytesThatAreNotText(t *testing.T) {
	addr := cliBroker(t)
	if _, err := runCLI(t, "stream", "create", "acme/prod/raw", "--addr", addr); err != nil {
		t.Fatal(err)
	}
	raw := "\xff\xfebin" // from a program: a command line's arguments are text
	cl, err := client.Dial(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := cl.Publish(context.Background(), client.Stream{Tenant: "acme", Namespace: "prod", Name: "raw"}, []byte(raw)); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "sub", "acme/prod/raw", "--addr", addr, "--from", "earliest", "--count", "1", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal([]byte(out), &ev); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if ev["value_base64"] != base64.StdEncoding.EncodeToString([]byte(raw)) || ev["value"] != "" {
		t.Fatalf("the record came back as %s, want value_base64 of its bytes", out)
	}
}
