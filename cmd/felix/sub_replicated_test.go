package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/engine"
)

// `felix sub` on a Quorum stream of replication factor 3 prints its
// records and no "records missed" line: the generation start the leader
// wrote at offset 0 is no record, and the broker says so
// (control_events), where before the fix every subscriber was told a
// record before offset 1 had been dropped.
func TestSubOnAReplicatedStreamPrintsNoMissedRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("three brokers on one embedded etcd member")
	}
	etcdClient := freeAddr(t)
	var brokers []*served
	for i, id := range []string{"a", "b", "c"} {
		flags := map[string]string{"addr": "127.0.0.1:0", "admin-addr": "", "data": t.TempDir(), "broker-id": id, "log-level": "error"}
		if i == 0 {
			flags["etcd-client-addr"] = etcdClient
		} else {
			flags["etcd-endpoints"] = "http://" + etcdClient
		}
		brokers = append(brokers, startServed(t, configOf(t, flags)))
	}
	a := brokers[0]
	awaitView(t, a, "three brokers registered", func() bool { return len(a.View().Status().Brokers) == 3 })
	s := client.Stream{Tenant: "default", Namespace: "demo", Name: "replicated"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := client.StreamConfig{Shards: 1, ReplicationFactor: 3, Consistency: client.ConsistencyQuorum}
	if _, err := dialServed(t, a.Addr().String()).CreateStream(ctx, s, cfg); err != nil {
		t.Fatal(err)
	}
	awaitOpened(t, brokers, engine.StreamID{Tenant: s.Tenant, Namespace: s.Namespace, Name: s.Name}, 1)
	// A leader not serving yet refuses (not_leader, or no_quorum while its
	// followers catch up): tried again under the client's backoff.
	cc, err := client.DialCluster(ctx, []string{a.Addr().String()},
		client.WithRetryPolicy(client.RetryPolicy{Attempts: 100, MaxBackoff: 100 * time.Millisecond, Deadline: 20 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	for i := range 3 {
		if _, err := cc.PublishAtLeastOnce(ctx, s, fmt.Appendf(nil, "rec-%d", i)); err != nil {
			t.Fatalf("publish rec-%d: %v", i, err)
		}
	}
	out, err := runCLI(t, "sub", "demo/replicated", "--from", "earliest", "--until-end", "--addr", a.Addr().String())
	if err != nil {
		t.Fatalf("felix sub: %v", err)
	}
	contains(t, out, "rec-0", "rec-1", "rec-2")
	if strings.Contains(out, "records missed") {
		t.Fatalf("felix sub on a replicated stream reported records missed that never existed:\n%s", out)
	}
}
