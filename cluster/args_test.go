package cluster_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/felixbroker/felix/cluster"
)

func scanString(t *testing.T, td *datadriven.TestData, key string) string {
	var s string
	td.ScanArgs(t, key, &s)
	return s
}

func maybeString(t *testing.T, td *datadriven.TestData, key string) string {
	var s string
	td.MaybeScanArgs(t, key, &s)
	return s
}

// scanBroker reads "join id=a disk=d1 [rack=r1]"; its addresses follow
// from its id.
func scanBroker(t *testing.T, td *datadriven.TestData) cluster.Broker {
	id := scanString(t, td, "id")
	return cluster.Broker{ID: id, DiskID: scanString(t, td, "disk"), Rack: maybeString(t, td, "rack"),
		ClientAddr: id + ":7180", PeerAddr: id + ":7190"}
}

// scanObject reads "stream=tenant/namespace/name" or "cache=...".
func scanObject(t *testing.T, td *datadriven.TestData) cluster.ObjectID {
	for kind, key := range map[cluster.Kind]string{cluster.KindStream: "stream", cluster.KindCache: "cache"} {
		if td.HasArg(key) {
			return parseObject(t, td, kind, scanString(t, td, key))
		}
	}
	td.Fatalf(t, "want stream= or cache=")
	return cluster.ObjectID{}
}

func parseObject(t *testing.T, td *datadriven.TestData, kind cluster.Kind, s string) cluster.ObjectID {
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		td.Fatalf(t, "want tenant/namespace/name, not %q", s)
	}
	return cluster.ObjectID{Kind: kind, Tenant: parts[0], Namespace: parts[1], Name: parts[2]}
}

func scanSpec(t *testing.T, td *datadriven.TestData) cluster.ObjectSpec {
	spec := cluster.ObjectSpec{ID: scanObject(t, td)}
	td.ScanArgs(t, "shards", &spec.Shards)
	td.ScanArgs(t, "rf", &spec.ReplicationFactor)
	return spec
}

// scanShard reads "shard=kind/tenant/namespace/name/N".
func scanShard(t *testing.T, td *datadriven.TestData) cluster.ShardID {
	s := scanString(t, td, "shard")
	parts := strings.Split(s, "/")
	if len(parts) != 5 {
		td.Fatalf(t, "want kind/tenant/namespace/name/shard, not %q", s)
	}
	kind := map[string]cluster.Kind{"stream": cluster.KindStream, "cache": cluster.KindCache}[parts[0]]
	n, err := strconv.Atoi(parts[4])
	if err != nil {
		td.Fatalf(t, "shard %q: %v", s, err)
	}
	return cluster.ShardID{Object: parseObject(t, td, kind, strings.Join(parts[1:4], "/")), Shard: n}
}

// scanAssignment reads "replicas=a@d1,b@d1 leader=a@d1|none gen=N" for
// the object of shard=, at its stored incarnation.
func scanAssignment(t *testing.T, td *datadriven.TestData, d *driver) cluster.Assignment {
	a := cluster.Assignment{Incarnation: d.store.objects[scanShard(t, td).Object].Incarnation}
	var replicas []string
	td.ScanArgs(t, "replicas", &replicas)
	for _, r := range replicas {
		a.Replicas = append(a.Replicas, parseReplica(t, td, r))
	}
	if leader := scanString(t, td, "leader"); leader != "none" {
		a.Leader = parseReplica(t, td, leader)
	}
	td.ScanArgs(t, "gen", &a.Generation)
	return a
}

func parseReplica(t *testing.T, td *datadriven.TestData, s string) cluster.Replica {
	broker, disk, ok := strings.Cut(s, "@")
	if !ok {
		td.Fatalf(t, "want broker@disk, not %q", s)
	}
	return cluster.Replica{Broker: broker, DiskID: disk}
}
