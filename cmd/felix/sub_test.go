package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/netio/wire"
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

// --until-end exits once every shard read is at the end it had when the
// subscription began (a shard with nothing is at its end at once), and
// --since starts each shard at its first record at or after a time: a
// duration ago, or an RFC 3339 time.
func TestSubSinceStartsAtATimeAndUntilEndExits(t *testing.T) {
	addr := cliBroker(t)
	must := mustAt(t, addr)
	must("stream", "create", "acme/prod/clicks", "--shards", "3")
	cl, err := client.Dial(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	s := client.Stream{Tenant: "acme", Namespace: "prod", Name: "clicks"}
	now := time.Now()
	for i, age := range []time.Duration{3 * time.Hour, 2 * time.Hour, 50 * time.Minute, 20 * time.Minute, 5 * time.Minute} {
		key := client.WithKey([]byte(fmt.Sprint("k", i%2))) // two of the three shards; the third stays empty
		if _, err := cl.Publish(context.Background(), s, fmt.Appendf(nil, "age-%s", age), key, client.WithTimestamp(now.Add(-age))); err != nil {
			t.Fatal(err)
		}
	}
	all := must("sub", "acme/prod/clicks", "--from", "earliest", "--until-end")
	if n := strings.Count(all, "age-"); n != 5 {
		t.Fatalf("--until-end from earliest printed %d records, want the 5 held:\n%s", n, all)
	}
	recent := must("sub", "acme/prod/clicks", "--since", "1h", "--until-end")
	contains(t, recent, "age-50m0s", "age-20m0s", "age-5m0s")
	if strings.Contains(recent, "age-2h0m0s") || strings.Contains(recent, "age-3h0m0s") {
		t.Fatalf("--since 1h printed records older than an hour:\n%s", recent)
	}
	at := must("sub", "acme/prod/clicks", "--since", now.Add(-30*time.Minute).UTC().Format(time.RFC3339), "--until-end", "--json")
	if n := strings.Count(at, "\n"); n != 2 || !strings.Contains(at, `"value":"age-20m0s"`) {
		t.Fatalf("--since an RFC 3339 time 30 minutes ago printed:\n%s\nwant the two records since", at)
	}
	if _, err := runCLI(t, "sub", "acme/prod/clicks", "--addr", addr, "--since", "10m", "--from", "earliest"); err == nil ||
		!strings.Contains(err.Error(), "exclude each other") {
		t.Fatalf("--since with --from: %v", err)
	}
	if _, err := runCLI(t, "sub", "acme/prod/clicks", "--addr", addr, "--since", "yesterday"); err == nil ||
		!strings.Contains(err.Error(), "RFC 3339") {
		t.Fatalf("--since yesterday: %v", err)
	}
}

// A broker without subscribe_bounds is not asked for --until-end (it
// would ignore it and felix sub would never exit): the refusal says what
// to do.
func TestSubBoundsOnABrokerWithoutThemSaysWhatToDo(t *testing.T) {
	err := boundsUnserved(&client.ShardError{Shard: 0, Err: &client.ServerError{Code: client.Code(wire.CodeFeatureNotNegotiated),
		Name: "feature_not_negotiated", Message: "the broker does not serve subscribe_bounds", Local: true}})
	if !errors.Is(err, client.ErrFeatureNotNegotiated) {
		t.Fatalf("%v: the cause is lost", err)
	}
	contains(t, explain(err), "does not serve --since or --until-end", "upgrade the broker")
}
