package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/felixbroker/felix/broker"
	"github.com/felixbroker/felix/client"
)

// felix status on a healthy cluster of one says so and exits 0.
func TestStatusOfAHealthyBroker(t *testing.T) {
	b := startServed(t, configOf(t, map[string]string{"addr": "127.0.0.1:0", "admin-addr": "127.0.0.1:0", "data": "", "log-level": "error"}))
	s := client.Stream{Tenant: "acme", Namespace: "prod", Name: "orders"}
	if _, err := dialServed(t, b.Addr().String()).CreateStream(context.Background(), s, client.StreamConfig{Shards: 2, InMemory: true}); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "status", "--admin", b.AdminAddr())
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	contains(t, out, "broker "+brokerIDAlone+": ready", "control plane: on "+brokerIDAlone, "brokers: 1 live",
		"shards 2: 0 without a serving leader", "healthy")
}

// What makes a cluster unhealthy is named, and fails the command.
func TestStatusNamesWhatIsWrong(t *testing.T) {
	st := broker.ClusterStatusJSON{Version: broker.ClusterStatusVersion, Broker: "a", NotReady: "opening shards",
		Brokers: []broker.ClusterBrokerJSON{{ID: "a", Live: true}, {ID: "b"}},
		Objects: []broker.ClusterObjectJSON{{State: broker.ObjectPlaced, Shards: []broker.ClusterShardJSON{
			{Replicas: []broker.ClusterReplicaJSON{{Broker: "a", Live: true}, {Broker: "b"}}, Leader: &broker.ClusterLeaderJSON{Broker: "a"}, LeaderLive: true},
			{Replicas: []broker.ClusterReplicaJSON{{Broker: "b"}}},
		}}},
	}
	var out bytes.Buffer
	problems := printStatus(&out, st)
	want := []string{"broker a is not ready", "no control plane", "1 broker(s) down", "1 shard(s) without a serving leader", "2 shard(s) short of a replica"}
	if strings.Join(problems, "|") != strings.Join(want, "|") {
		t.Fatalf("problems %q, want %q\n%s", problems, want, out.String())
	}
	contains(t, out.String(), "NOT READY: opening shards", "1 DOWN (b)", "UNHEALTHY")
}
