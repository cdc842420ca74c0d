package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/felixbroker/felix/broker"
	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/netio"
)

// `felix cluster status` against the default felix serve (a cluster of
// one, in memory): the header, the broker, and a stream's shards led by
// it; --json is /cluster's JSON.
func TestTheClusterStatusCommand(t *testing.T) {
	b := startServed(t, configOf(t, map[string]string{"addr": "127.0.0.1:0", "admin-addr": "127.0.0.1:0", "data": "", "log-level": "error"}))
	cl := dialServed(t, b.Addr().String())
	s := client.Stream{Tenant: "acme", Namespace: "prod", Name: "orders"}
	if _, err := cl.CreateStream(context.Background(), s, client.StreamConfig{Shards: 2, InMemory: true}); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "cluster", "status", "--admin", b.AdminAddr())
	if err != nil {
		t.Fatal(err)
	}
	addr := b.Addr().String()
	contains(t, out, "cluster of 1 broker, control plane on "+brokerIDAlone,
		"ID", "CLIENT", "PEER", "RACK", "LIVE", brokerIDAlone+"  "+addr,
		"OBJECT", "SHARD", "LEADER", "REPLICAS", "GENERATION",
		"stream/acme/prod/orders  0      "+brokerIDAlone+" "+addr, "stream/acme/prod/orders  1")
	if strings.Contains(out, "not ready") || strings.Contains(out, "not placed") {
		t.Fatalf("a ready cluster of one, everything placed:\n%s", out)
	}
	raw, err := runCLI(t, "cluster", "status", "--admin-addr", b.AdminAddr(), "--json")
	if err != nil {
		t.Fatal(err)
	}
	var st broker.ClusterStatusJSON
	if err := json.Unmarshal([]byte(raw), &st); err != nil || st.Version != broker.ClusterStatusVersion || len(st.Objects) != 1 {
		t.Fatalf("--json: %v\n%s", err, raw)
	}
}

// The table of a cluster with a broker gone, a shard without a leader,
// and objects not placed says each (the golden status's cluster).
func TestTheClusterStatusTableSaysWhatIsNotWell(t *testing.T) {
	st := broker.ClusterStatusJSON{Version: 1, Broker: "b", NotReady: "opening the shards this broker holds", Revision: 9,
		Brokers: []broker.ClusterBrokerJSON{{ID: "b", ClientAddr: "h:1", PeerAddr: "h:2", Rack: "r1", DiskID: "d", Live: true}, {ID: "c"}},
		Objects: []broker.ClusterObjectJSON{
			{Kind: "stream", Tenant: "t", Namespace: "n", Name: "s", ShardCount: 2, State: broker.ObjectPlaced, Shards: []broker.ClusterShardJSON{
				{Shard: 0, Replicas: []broker.ClusterReplicaJSON{{Broker: "c"}, {Broker: "b", Live: true}},
					Leader: &broker.ClusterLeaderJSON{Broker: "c"}, Generation: 2},
				{Shard: 1, Replicas: []broker.ClusterReplicaJSON{{Broker: "b", Live: true, JoinedAt: 3}}, Generation: 3},
			}},
			{Kind: "cache", Tenant: "t", Namespace: "n", Name: "kv", ShardCount: 1, State: broker.ObjectUnplaced,
				Unplaced: &broker.ClusterUnplacedJSON{Needed: 3, Live: 1}},
			{Kind: "stream", Tenant: "t", Namespace: "n", Name: "new", ShardCount: 4, State: broker.ObjectPlacing},
		}}
	var out bytes.Buffer
	if err := printClusterStatus(&out, st); err != nil {
		t.Fatal(err)
	}
	contains(t, out.String(), "cluster of 1 broker (1 more named by replicas, not live), no control plane leads; seen by b at revision 9",
		"b is not ready: opening the shards this broker holds",
		"b   h:1     h:2   r1    yes", "c   -       -     -     no",
		"c (not live)  c (not live),b   2", "none          b (joined at 3)  3",
		"not placed: cache/t/n/kv: its replication factor needs 3 brokers, 1 live",
		"not placed yet: stream/t/n/new (0 of 4 shards assigned)")
}

// A broker alone has no cluster status: the command says so.
func TestTheClusterStatusOfABrokerAloneSaysSo(t *testing.T) {
	b, err := broker.Start(broker.Config{AdminAddr: "127.0.0.1:0", Net: netio.Config{Addr: "127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Stop(context.Background()) })
	_, err = runCLI(t, "cluster", "status", "--admin", b.AdminAddr())
	if err == nil || !strings.Contains(err.Error(), "runs alone") || !strings.Contains(err.Error(), b.AdminAddr()) {
		t.Fatalf("felix cluster status of a broker alone: %v", err)
	}
}

// An admin address nothing listens on: the error names it and --admin.
func TestTheClusterStatusOfNoBrokerNamesTheAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = runCLI(t, "cluster", "status", "--admin", addr)
	if err == nil || !strings.Contains(err.Error(), "cannot reach the broker's admin server at "+addr) || !strings.Contains(err.Error(), "--admin") {
		t.Fatalf("felix cluster status with nothing at %s: %v", addr, err)
	}
}
