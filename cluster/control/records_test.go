package control

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/engine/shardlog"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s changed: a frozen format\n got: %s\nwant: %s", name, got, want)
	}
}

var (
	orders     = cluster.ObjectID{Kind: cluster.KindStream, Tenant: "acme", Namespace: "shop", Name: "orders"}
	sessions   = cluster.ObjectID{Kind: cluster.KindCache, Tenant: "acme", Namespace: "web", Name: "sessions"}
	created    = time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	replicaB1  = cluster.Replica{Broker: "b1", DiskID: "d-1"}
	replicaB2  = cluster.Replica{Broker: "b2", DiskID: "d-2"}
	assignment = cluster.Assignment{Replicas: []cluster.Replica{replicaB1, replicaB2}, Leader: replicaB1,
		Generation: 3, Incarnation: 17}
)

func TestABrokerRegistrationIsFrozen(t *testing.T) {
	b := cluster.Broker{ID: "b1", ClientAddr: "10.0.0.1:7180", PeerAddr: "10.0.0.1:7190", Rack: "r1", DiskID: "d-1"}
	value := encodeBroker(b)
	golden(t, "broker.json", value)
	got, err := decodeBroker("b1", value)
	if err != nil || got != b {
		t.Fatalf("decoded %+v, %v; want %+v", got, err, b)
	}
	if _, err := decodeBroker("b2", value); !errors.Is(err, ErrMalformed) {
		t.Fatalf("a registration under another broker's key: %v, want ErrMalformed", err)
	}
}

func TestAStreamEntryIsFrozen(t *testing.T) {
	cfg := engine.StreamConfig{Shards: 6, Durable: true, Consistency: engine.ConsistencyQuorum, ReplicationFactor: 3,
		Retention: shardlog.Retention{MaxAge: time.Hour}, Fsync: engine.FsyncSetting{Kind: "OnCommit"},
		Delivery: engine.DeliveryAtLeastOnce, Kind: engine.KindStream}
	e := Entry{Object: orders, Stream: &cfg, Created: created, Incarnation: 17}
	value := encodeEntry(e)
	golden(t, "stream.json", value)
	got, err := decodeEntry(orders, store.KV{Value: value, CreateRevision: 17})
	if err != nil || *got.Stream != cfg || got.Cache != nil || !got.Created.Equal(created) || got.Incarnation != 17 {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	if spec := got.Spec(); spec.Shards != 6 || spec.ReplicationFactor != 3 || spec.Incarnation != 17 {
		t.Fatalf("spec %+v", spec)
	}
}

func TestACacheEntryIsFrozen(t *testing.T) {
	cfg := cache.Config{Shards: 4, Durable: true, ReplicationFactor: 1}
	value := encodeEntry(Entry{Object: sessions, Cache: &cfg, Created: created})
	golden(t, "cache.json", value)
	got, err := decodeEntry(sessions, store.KV{Value: value, CreateRevision: 5})
	if err != nil || *got.Cache != cfg || got.Stream != nil {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	if _, err := decodeEntry(orders, store.KV{Value: value, CreateRevision: 5}); !errors.Is(err, ErrMalformed) {
		t.Fatalf("a cache's entry under a stream's key: %v, want ErrMalformed", err)
	}
}

func TestAnAssignmentIsFrozen(t *testing.T) {
	shard := cluster.ShardID{Object: orders, Shard: 2}
	value := encodeAssignment(assignment, 12)
	golden(t, "assignment.json", value)
	got, err := decodeAssignment(shard, store.KV{Value: value, ModRevision: 40})
	if err != nil || !got.Assignment.Equal(assignment) || got.Epoch != 12 || got.Revision != 40 || got.Shard != shard {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	noLeader := assignment.Clone()
	noLeader.Leader, noLeader.Generation = cluster.Replica{}, 4
	value = encodeAssignment(noLeader, 12)
	golden(t, "assignment_no_leader.json", value)
	got, err = decodeAssignment(shard, store.KV{Value: value, ModRevision: 41})
	if err != nil || !got.Assignment.Equal(noLeader) {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	// b2 back on a new disk took its old replica's place at generation 4.
	joined := noLeader.Clone()
	joined.Replicas[1] = cluster.Replica{Broker: replicaB2.Broker, DiskID: "disk-new"}
	joined.Joins = []cluster.Join{{Replica: joined.Replicas[1], Generation: 4}}
	value = encodeAssignment(joined, 12)
	golden(t, "assignment_joined.json", value)
	got, err = decodeAssignment(shard, store.KV{Value: value, ModRevision: 42})
	if err != nil || !got.Assignment.Equal(joined) || got.Assignment.JoinedAt(joined.Replicas[1]) != 4 {
		t.Fatalf("decoded %+v, %v", got, err)
	}
}

func TestAnUnplacedReportIsFrozen(t *testing.T) {
	u := UnplacedReport{Object: orders, Needed: 3, Live: 2, Incarnation: 17, Epoch: 12}
	value := encodeUnplaced(u)
	golden(t, "unplaced.json", value)
	got, err := decodeUnplaced(orders, value)
	if err != nil || got != u {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	if err := got.Err(); !errors.Is(err, cluster.ErrTooFewBrokers) || !strings.Contains(err.Error(), "needs 3 brokers, 2 are live") {
		t.Fatalf("the report as an error: %v", err)
	}
}

func TestMalformedValuesAreRefused(t *testing.T) {
	shard := cluster.ShardID{Object: orders, Shard: 0}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"broker: not JSON", second(decodeBroker("b1", []byte("{")))},
		{"broker: no disk id", second(decodeBroker("b1", []byte(`{"id":"b1"}`)))},
		{"entry: no config", second(decodeEntry(orders, store.KV{Value: []byte(`{}`), CreateRevision: 1}))},
		{"entry: zero shards", second(decodeEntry(orders, store.KV{Value: []byte(`{"stream":{"replication_factor":1}}`), CreateRevision: 1}))},
		{"assignment: no replicas", second(decodeAssignment(shard, store.KV{Value: []byte(`{"generation":1,"incarnation":1}`)}))},
		{"assignment: generation 0", second(decodeAssignment(shard, store.KV{Value: []byte(`{"replicas":[{"broker":"b","disk_id":"d"}],"incarnation":1}`)}))},
		{"assignment: a leader not a replica", second(decodeAssignment(shard, store.KV{Value: []byte(
			`{"replicas":[{"broker":"b","disk_id":"d"}],"leader":{"broker":"c","disk_id":"d"},"generation":1,"incarnation":1}`)}))},
		{"assignment: a replica without a disk", second(decodeAssignment(shard, store.KV{Value: []byte(`{"replicas":[{"broker":"b"}],"generation":1,"incarnation":1}`)}))},
		{"assignment: a join not a replica", second(decodeAssignment(shard, store.KV{Value: []byte(
			`{"replicas":[{"broker":"b","disk_id":"d"}],"generation":2,"incarnation":1,"joins":[{"broker":"c","disk_id":"d","generation":2}]}`)}))},
		{"assignment: a join above the generation", second(decodeAssignment(shard, store.KV{Value: []byte(
			`{"replicas":[{"broker":"b","disk_id":"d"}],"generation":2,"incarnation":1,"joins":[{"broker":"b","disk_id":"d","generation":3}]}`)}))},
		{"unplaced: needs nothing", second(decodeUnplaced(orders, []byte(`{"incarnation":1}`)))},
	} {
		if !errors.Is(tc.err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", tc.name, tc.err)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func FuzzDecodeAssignment(f *testing.F) {
	f.Add(encodeAssignment(assignment, 12))
	f.Add([]byte(`{"replicas":[],"generation":1}`))
	shard := cluster.ShardID{Object: orders, Shard: 1}
	f.Fuzz(func(t *testing.T, value []byte) {
		a, err := decodeAssignment(shard, store.KV{Value: value, ModRevision: 9})
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("an error not matching ErrMalformed: %v", err)
			}
			return
		}
		if err := checkAssignment(a.Assignment); err != nil {
			t.Fatalf("accepted what checkAssignment refuses: %v", err)
		}
		again, err := decodeAssignment(shard, store.KV{Value: encodeAssignment(a.Assignment, a.Epoch), ModRevision: 9})
		if err != nil || !again.Assignment.Equal(a.Assignment) || again.Epoch != a.Epoch {
			t.Fatalf("a round trip changed %+v into %+v, %v", a, again, err)
		}
	})
}
