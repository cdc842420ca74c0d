package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
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
		if len(f) != 11 || (f[0] != "0" && f[0] != "1") {
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

// felix stream describe says, per shard, its bytes, its oldest and newest
// record times and the consumer groups reading it; --json the same in
// snake_case.
func TestStreamDescribeSaysEachShardsBytesTimesAndGroups(t *testing.T) {
	addr := cliBroker(t)
	must := mustAt(t, addr)
	must("stream", "create", "acme/prod/orders", "--shards", "2")
	cl, err := client.Dial(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	s := client.Stream{Tenant: "acme", Namespace: "prod", Name: "orders"}
	oldest, newest := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	for _, at := range []time.Time{oldest, oldest.Add(time.Hour), newest} {
		if _, err := cl.Publish(context.Background(), s, []byte("v"), client.WithTimestamp(at)); err != nil {
			t.Fatal(err)
		}
	}
	must("group", "poll", "acme/prod/orders", "billing", "--shard", "0")
	must("group", "poll", "acme/prod/orders", "audit", "--shard", "0")
	out := must("stream", "describe", "acme/prod/orders")
	contains(t, out, "BYTES", "OLDEST", "NEWEST", "GROUPS", "2026-11-30T08:00:00Z", "2026-12-01T09:30:00Z")
	var line0 []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 11 && f[0] == "0" {
			line0 = f
		}
	}
	if line0 == nil || line0[7] == "-" || line0[10] != "audit,billing" && line0[10] != "billing,audit" {
		t.Fatalf("shard 0's line %q: want its bytes and the groups audit and billing\n%s", line0, out)
	}
	var v struct {
		Stream    string `json:"stream"`
		ShardInfo []struct {
			Shard      int        `json:"shard"`
			Bytes      int64      `json:"bytes"`
			Held       int64      `json:"held"`
			OldestTime *time.Time `json:"oldest_time"`
			NewestTime *time.Time `json:"newest_time"`
			Groups     []string   `json:"groups"`
		} `json:"shard_info"`
	}
	js := must("stream", "describe", "acme/prod/orders", "--json")
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		t.Fatalf("%v: %s", err, js)
	}
	if len(v.ShardInfo) != 2 || v.Stream != "acme/prod/orders" {
		t.Fatalf("--json: %s", js)
	}
	sh := v.ShardInfo[0]
	if sh.Held != 3 || sh.Bytes <= 0 || sh.OldestTime == nil || !sh.OldestTime.Equal(oldest) ||
		sh.NewestTime == nil || !sh.NewestTime.Equal(newest) || fmt.Sprint(len(sh.Groups)) != "2" {
		t.Fatalf("shard 0 in --json: %+v\n%s", sh, js)
	}
	if e := v.ShardInfo[1]; e.OldestTime != nil || e.Groups == nil || len(e.Groups) != 0 {
		t.Fatalf("the empty shard 1 in --json: %+v, want no times and no groups\n%s", e, js)
	}
}
