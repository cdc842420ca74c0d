package broker

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/cluster/store"
)

// alone is a broker of a cluster of one on an embedded etcd in dir/etcd
// (etcd's fsyncs off: the tests do not crash the machine).
func alone(dir string) Config {
	return Config{DataDir: dir, Cluster: &ClusterConfig{BrokerID: "solo", Embedded: &store.EmbedConfig{UnsafeNoFsync: true}}}
}

// A broker with an embedded single-member etcd in its data directory
// starts, serves, stops, and starts again with its streams and records:
// the catalog and the placement are in the member's directory.
func TestABrokerOnAnEmbeddedEtcdRestartsWithItsStreams(t *testing.T) {
	dir := t.TempDir()
	b := start(t, alone(dir))
	ctx := testCtx(t)
	c := dial(t, b)
	if _, err := c.CreateStream(ctx, testStream, client.StreamConfig{Shards: 2, Fsync: client.Fsync{Kind: client.FsyncOnCommit}}); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"one", "two", "three"} {
		if _, err := c.Publish(ctx, testStream, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	stop(t, b)
	if _, err := os.Stat(filepath.Join(dir, "etcd", "member")); err != nil {
		t.Fatalf("no etcd member in the data directory: %v", err)
	}
	again := start(t, alone(dir))
	if got := storedRecords(t, dial(t, again), testStream); got != 3 {
		t.Fatalf("after a restart the stream holds %d records, want 3", got)
	}
}

// storedRecords sums the stream's shards' next offsets.
func storedRecords(t *testing.T, c *client.Client, s client.Stream) uint64 {
	t.Helper()
	info, err := c.DescribeStream(testCtx(t), s)
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, sh := range info.Shards {
		n += uint64(sh.NextOffset)
	}
	return n
}

// readShard reads want records from one shard, from the earliest.
func readShard(t *testing.T, c *client.Client, s client.Stream, shard, want int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(testCtx(t), clusterWait)
	defer cancel()
	sub, err := c.Subscribe(ctx, s, shard, client.SubscribeOptions{Start: client.FromEarliest()})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var out []string
	for len(out) < want {
		ev, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("reading %v shard %d after %q: %v", s, shard, out, err)
		}
		out = append(out, string(ev.Value))
	}
	return out
}

// A cluster start that fails midway (its peer address taken) closes what
// it opened, the embedded etcd member included: the next start on the
// same directory works.
func TestAFailedClusterStartReleasesTheMemberAndTheDirectory(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	cfg := alone(dir)
	cfg.Net.Addr, cfg.Cluster.PeerAddr = "127.0.0.1:0", taken.Addr().String()
	if b, err := Start(cfg); err == nil {
		stop(t, b)
		t.Fatal("a broker started on a taken peer address")
	}
	b := start(t, alone(dir))
	stop(t, b)
}
