package broker

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/control"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenStatus is a cluster with one of everything /cluster describes: a
// control plane, a broker with a rack and one without, a broker gone that
// a replica still names, a stream placed (one shard led by a live broker,
// one whose leader is gone and one with no leader), a stream the control
// plane has not decided about (its old incarnation's assignment left out)
// and a cache it could not place.
func goldenStatus() control.Status {
	a := cluster.Replica{Broker: "a", DiskID: "disk-a"}
	b := cluster.Replica{Broker: "b", DiskID: "disk-b"}
	c := cluster.Replica{Broker: "c", DiskID: "disk-c"}
	orders := cluster.ObjectID{Kind: cluster.KindStream, Tenant: "acme", Namespace: "prod", Name: "orders"}
	audit := cluster.ObjectID{Kind: cluster.KindStream, Tenant: "acme", Namespace: "prod", Name: "audit"}
	sessions := cluster.ObjectID{Kind: cluster.KindCache, Tenant: "acme", Namespace: "prod", Name: "sessions"}
	shard := func(id cluster.ObjectID, n int, leader cluster.Replica, gen uint64, inc int64, live bool, replicas ...cluster.Replica) control.ShardStatus {
		return control.ShardStatus{ShardAssignment: control.ShardAssignment{Shard: cluster.ShardID{Object: id, Shard: n},
			Assignment: cluster.Assignment{Replicas: replicas, Leader: leader, Generation: gen, Incarnation: inc}}, LeaderLive: live}
	}
	return control.Status{
		Revision: 42, ControlPlane: "a", Epoch: 7,
		Brokers: []cluster.Broker{
			{ID: "a", ClientAddr: "10.0.0.1:7117", PeerAddr: "10.0.0.1:7119", Rack: "r1", DiskID: "disk-a"},
			{ID: "b", ClientAddr: "10.0.0.2:7117", PeerAddr: "10.0.0.2:7119", DiskID: "disk-b"},
		},
		Objects: []control.Entry{
			{Object: audit, Stream: &engine.StreamConfig{Shards: 1, ReplicationFactor: 1}, Incarnation: 30},
			{Object: orders, Stream: &engine.StreamConfig{Shards: 3, ReplicationFactor: 2}, Incarnation: 12},
			{Object: sessions, Cache: &cache.Config{Shards: 1, ReplicationFactor: 3}, Incarnation: 20},
		},
		Shards: []control.ShardStatus{
			shard(audit, 0, a, 1, 25, true, a),
			shard(orders, 0, a, 1, 12, true, a, b),
			shard(orders, 1, c, 2, 12, false, c, a),
			shard(orders, 2, cluster.Replica{}, 3, 12, false, b, c),
		},
		Unplaced: []control.UnplacedReport{{Object: sessions, Needed: 3, Live: 2, Incarnation: 20, Epoch: 7}},
	}
}

// /cluster's JSON is frozen: a change to its shape shows here, and is
// made on purpose (go test ./broker -run Frozen -update rewrites it).
func TestTheClusterStatusJSONIsFrozen(t *testing.T) {
	got, err := json.MarshalIndent(clusterStatus("b", false, "opening the shards this broker holds", goldenStatus()), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "cluster_status.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("/cluster's JSON changed (run with -update if on purpose); got:\n%s", got)
	}
}

// What the golden file shows, said once in code: the states, the leaders'
// addresses and the brokers gone.
func TestTheClusterStatusDescribesEachObject(t *testing.T) {
	st := clusterStatus("b", true, "", goldenStatus())
	if len(st.Brokers) != 3 || st.Brokers[2].ID != "c" || st.Brokers[2].Live || !st.Brokers[0].Live {
		t.Fatalf("brokers: %+v", st.Brokers)
	}
	states := map[string]string{}
	for _, o := range st.Objects {
		states[o.Name] = o.State
	}
	if states["audit"] != ObjectPlacing || states["orders"] != ObjectPlaced || states["sessions"] != ObjectUnplaced {
		t.Fatalf("states: %v", states)
	}
	orders := st.Objects[1].Shards
	if orders[0].Leader.ClientAddr != "10.0.0.1:7117" || orders[1].Leader.ClientAddr != "" || orders[2].Leader != nil {
		t.Fatalf("orders' leaders: %+v %+v %+v", orders[0].Leader, orders[1].Leader, orders[2].Leader)
	}
	if u := st.Objects[2].Unplaced; u == nil || u.Needed != 3 || u.Live != 2 || u.Reason == "" {
		t.Fatalf("sessions unplaced: %+v", u)
	}
	if len(st.Objects[0].Shards) != 0 {
		t.Fatalf("audit shows its old incarnation's shard: %+v", st.Objects[0].Shards)
	}
}
