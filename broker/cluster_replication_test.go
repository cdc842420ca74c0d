package broker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/segment"
)

// replicationLease is the shard lease of the replication tests: short, so
// a failover takes about a second of real time.
const replicationLease = 400 * time.Millisecond

// Three brokers, a stream of replication factor 3 at Quorum: a publish
// acknowledged by its leader is on the leader's successor once that broker
// stops, and the successor, one of the other two, takes publishes.
func TestAReplicatedStreamFailsOverWhenItsLeaderStops(t *testing.T) {
	s := sharedStore(t)
	brokers := map[string]*Broker{}
	for _, id := range []string{"a", "b", "c"} {
		cfg := clustered(id, s, Config{AdminAddr: "127.0.0.1:0"})
		cfg.Cluster.ShardLease, cfg.Cluster.PublishTimeout = replicationLease, 2*time.Second
		brokers[id] = start(t, cfg)
	}
	a := brokers["a"]
	waitView(t, a.View(), "a sees a, b and c", registered(a.View(), "a", "b", "c"))
	id := engine.StreamID{Tenant: testStream.Tenant, Namespace: testStream.Namespace, Name: testStream.Name}
	cfg := engine.StreamConfig{Shards: 1, Durable: true, ReplicationFactor: 3, Consistency: engine.ConsistencyQuorum,
		Fsync: engine.FsyncSetting{Kind: "OnCommit"}}
	if _, err := a.Engine().CreateStream(id, cfg); err != nil {
		t.Fatal(err)
	}
	leader := awaitReplicatedLeader(t, brokers, id, "")
	var acked []string
	c := dial(t, brokers[leader])
	for i := range 5 {
		v := fmt.Sprint("v", i)
		publishUntilAcked(t, c, v)
		acked = append(acked, v)
	}
	metrics := scrape(t, brokers[leader].AdminAddr())
	for _, follower := range []string{"a", "b", "c"} {
		if follower != leader && !strings.Contains(metrics, `felix_broker_replication_lag_records{stream="t/n/s",shard="0",follower="`+follower+`"}`) {
			t.Errorf("the leader's /metrics has no replication lag of follower %s:\n%s", follower, metrics)
		}
	}
	stop(t, brokers[leader])
	delete(brokers, leader)
	next := awaitReplicatedLeader(t, brokers, id, leader)
	c2 := dial(t, brokers[next])
	publishUntilAcked(t, c2, "after")
	info, err := c2.DescribeStream(testCtx(t), testStream)
	if err != nil {
		t.Fatal(err)
	}
	if sh := info.Shards[0]; sh.LeaderID == leader || sh.Generation < 2 || len(sh.Replicas) != 3 || sh.Replicas[0] != sh.LeaderID {
		t.Errorf("describe after the failover: %+v, want a leader other than %s at a generation above 1, first of 3 replicas", sh, leader)
	}
	got := committedValues(t, brokers[next], id)
	t.Logf("%s led, %s leads after it stopped, holding %v", leader, next, got)
	// A publish refused no_quorum may be stored and then sent again: what
	// counts is each acknowledged value's first place, in order.
	if first := firstPlaces(got); !slices.Equal(first[:min(len(first), len(acked))], acked) || !slices.Contains(got, "after") {
		t.Fatalf("the successor %s holds %v, want %v and then \"after\"", next, got, acked)
	}
}

// streamShard is shard i of stream id, as the cluster names it.
func streamShard(id engine.StreamID, i int) cluster.ShardID {
	return cluster.ShardID{Object: cluster.ObjectID{Kind: cluster.KindStream, Tenant: id.Tenant, Namespace: id.Namespace,
		Name: id.Name}, Shard: i}
}

// awaitReplicatedLeader waits until one of brokers leads shard 0 of id
// (another than not) with a leadership that serves, and returns its id.
func awaitReplicatedLeader(t testing.TB, brokers map[string]*Broker, id engine.StreamID, not string) string {
	t.Helper()
	deadline := time.Now().Add(clusterWait)
	for time.Now().Before(deadline) {
		for bid, b := range brokers {
			if bid == not || b.node == nil || b.node.replicas == nil {
				continue
			}
			if b.node.replicas.StreamLeader(streamShard(id, 0)) != nil {
				return bid
			}
		}
		time.Sleep(20 * time.Millisecond) // polls a real cluster's failover: no event to wait on across brokers
	}
	t.Fatalf("no broker other than %q leads %v within %v", not, id, clusterWait)
	return ""
}

// publishUntilAcked publishes v until a publish of it is acknowledged
// (a fresh leadership waits for its first lease), failing on an error a
// client cannot retry.
func publishUntilAcked(t testing.TB, c *client.Client, v string) {
	t.Helper()
	deadline := time.Now().Add(clusterWait)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), clusterWait)
		_, err := c.Publish(ctx, testStream, []byte(v))
		cancel()
		if err == nil {
			return
		}
		if !errors.Is(err, client.ErrNotLeader) && !errors.Is(err, client.ErrNoQuorum) && !client.Retryable(err) {
			t.Fatalf("publish %q: %v", v, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("publish %q not acknowledged within %v: %v", v, clusterWait, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// committedValues reads shard 0 of id on b: its committed records' values.
func committedValues(t *testing.T, b *Broker, id engine.StreamID) []string {
	t.Helper()
	s, err := b.Engine().Stream(id)
	if err != nil {
		t.Fatal(err)
	}
	sh, err := s.Shard(0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for from := sh.Start(); from < sh.End(); {
		recs, next, err := sh.Read(from, 1<<20, nil)
		if err != nil {
			t.Fatal(err)
		}
		for it := segment.NewIter(recs); ; {
			r, ok := it.Next()
			if !ok {
				break
			}
			if r.Flags&segment.FlagControl == 0 {
				out = append(out, string(r.Value))
			}
		}
		from = next
	}
	return out
}

// A stream of one replica has nothing to fail over to and no broker
// heartbeats it: past several shard leases its leader still leads it at
// generation 1 and takes publishes.
func TestAnUnreplicatedStreamKeepsItsLeaderPastTheShardLease(t *testing.T) {
	s := sharedStore(t)
	var brokers []*Broker
	for _, id := range []string{"a", "b"} {
		cfg := clustered(id, s, Config{})
		cfg.Cluster.ShardLease = replicationLease
		brokers = append(brokers, start(t, cfg))
	}
	waitView(t, brokers[0].View(), "a sees a and b", registered(brokers[0].View(), "a", "b"))
	id := engine.StreamID{Tenant: testStream.Tenant, Namespace: testStream.Namespace, Name: testStream.Name}
	if _, err := brokers[0].Engine().CreateStream(id, engine.StreamConfig{Shards: 2, Durable: true}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * replicationLease) // what is checked is that nothing happens in this span
	for _, ls := range append(brokers[0].View().Local(), brokers[1].View().Local()...) {
		if a := ls.Assignment; a.Generation != 1 || a.Leader == (cluster.Replica{}) {
			t.Fatalf("%v after %v: %v, want generation 1 with its leader", ls.Shard, 4*replicationLease, a)
		}
	}
	c := dial(t, brokers[0])
	if _, err := c.Publish(testCtx(t), testStream, []byte("still served")); err != nil {
		t.Fatal(err)
	}
}

// firstPlaces is values with every value after its first place left out.
func firstPlaces(values []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range values {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
