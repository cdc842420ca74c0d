package e2e

import (
	"fmt"
	"testing"
	"time"

	fbroker "github.com/felixbroker/felix/broker"
	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/netio"
	"github.com/felixbroker/felix/segment/vfs"
)

// failoverLease is the shard lease of the cluster client's failover
// tests: short, so a dead leader is replaced in about a second.
const failoverLease = 400 * time.Millisecond

// startLeasedCluster is startCluster with a short shard lease, for the
// tests that stop a replicated shard's leader.
func startLeasedCluster(t *testing.T, n int) *testCluster {
	t.Helper()
	c := &testCluster{t: t, store: store.NewMemory(store.MemoryConfig{})}
	t.Cleanup(func() { c.store.Close() })
	c.brokers = startBrokers(t, c.store, n, failoverLease)
	return c
}

// startBrokers starts n brokers, b0 to b(n-1), on store, with the shard
// lease given (0: the default), and waits until each sees all of them
// registered. A benchmark's cluster, as a test's.
func startBrokers(tb testing.TB, st *store.Memory, n int, lease time.Duration) []*node {
	tb.Helper()
	var nodes []*node
	for i := range n {
		id := fmt.Sprintf("b%d", i)
		fs := vfs.NewMem()
		cfg := fbroker.Config{DataDir: "/data", FS: fs, Net: netio.Config{Addr: "127.0.0.1:0"},
			Cluster: &fbroker.ClusterConfig{BrokerID: id, Store: st, ShardLease: lease, PublishTimeout: 2 * time.Second}}
		b, err := fbroker.Start(cfg)
		if err != nil {
			tb.Fatal(err)
		}
		nd := &node{id: id, fs: fs, b: b, eng: b.Engine()}
		tb.Cleanup(func() { nd.stop(tb) })
		nodes = append(nodes, nd)
	}
	for _, nd := range nodes {
		deadline := time.NewTimer(clusterWait)
		for {
			changed := nd.view().Changed()
			if len(nd.view().Status().Brokers) == n {
				break
			}
			select {
			case <-changed:
			case <-deadline.C:
				tb.Fatalf("%s: not every broker registered within %v", nd.id, clusterWait)
			}
		}
		deadline.Stop()
	}
	return nodes
}

// addrs are the client addresses of nodes.
func addrs(nodes ...*node) []string {
	out := make([]string, 0, len(nodes))
	for _, nd := range nodes {
		out = append(out, nd.addr())
	}
	return out
}

// failoverPolicy rides out a failover: about ten seconds of attempts,
// each backoff under 200ms.
var failoverPolicy = client.RetryPolicy{Attempts: 60, InitialBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond}

// dialCluster is a cluster client of seeds, closed at the test's end.
func dialCluster(t testing.TB, seeds []string, opts ...client.Option) *client.ClusterClient {
	t.Helper()
	cc, err := client.DialCluster(testCtx(t), seeds, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// replicatedStream creates a stream of shards shards, replicated three
// ways at Quorum, through cc, and waits until each shard takes a publish
// (a fresh leadership waits for its first lease): one record "ready-i" on
// shard i.
func replicatedStream(t *testing.T, cc *client.ClusterClient, shards int) client.Stream {
	t.Helper()
	s := client.Stream{Tenant: "acme", Namespace: "e2e", Name: "s" + sanitize(t.Name())}
	cfg := client.StreamConfig{Shards: shards, ReplicationFactor: 3, Consistency: client.ConsistencyQuorum,
		Fsync: client.Fsync{Kind: client.FsyncOnCommit}}
	if _, err := cc.CreateStream(testCtx(t), s, cfg); err != nil {
		t.Fatal(err)
	}
	for i := range shards {
		if _, err := cc.PublishAtLeastOnce(testCtx(t), s, fmt.Appendf(nil, "ready-%d", i), client.WithKey(keyFor("ready", i, shards))); err != nil {
			t.Fatalf("shard %d never took a publish: %v", i, err)
		}
	}
	return s
}

// leaderOf is the node that leads shard of s, as a describe through cc
// says.
func leaderOf(t *testing.T, c *testCluster, cc *client.ClusterClient, s client.Stream, shard int) *node {
	t.Helper()
	info, err := cc.DescribeStream(testCtx(t), s)
	if err != nil {
		t.Fatal(err)
	}
	for _, nd := range c.brokers {
		if nd.addr() == info.Shards[shard].LeaderAddr {
			return nd
		}
	}
	t.Fatalf("shard %d is led at %q, none of the cluster's brokers", shard, info.Shards[shard].LeaderAddr)
	return nil
}
