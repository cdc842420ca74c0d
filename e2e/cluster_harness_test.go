package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	fbroker "github.com/felixbroker/felix/broker"
	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/cluster/control"
	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio"
	"github.com/felixbroker/felix/segment/vfs"
)

// clusterWait bounds every wait of a cluster test for the brokers' views
// to see something: far above what it takes, never slept.
const clusterWait = 20 * time.Second

// testCluster is n brokers in this process, each on a memory file system
// of its own, sharing one in-memory control-plane store: the production
// wiring (broker.Start with a ClusterConfig) with the store's in-memory
// twin instead of etcd.
type testCluster struct {
	t       *testing.T
	store   *store.Memory
	brokers []*node
}

// node is one broker of a testCluster.
type node struct {
	id  string
	fs  vfs.FS
	b   *fbroker.Broker
	eng *engine.Engine
}

// startCluster starts n brokers, b0 to b(n-1), and waits until each sees
// all of them registered. tune, when set, adjusts broker i's server config
// once its engine is open (auth, limits).
func startCluster(t *testing.T, n int, tune func(i int, nc *netio.Config)) *testCluster {
	t.Helper()
	c := &testCluster{t: t, store: store.NewMemory(store.MemoryConfig{})}
	t.Cleanup(func() { c.store.Close() })
	for i := range n {
		var tuneOne func(*netio.Config)
		if tune != nil {
			tuneOne = func(nc *netio.Config) { tune(i, nc) }
		}
		c.brokers = append(c.brokers, c.start(fmt.Sprintf("b%d", i), tuneOne))
	}
	for _, nd := range c.brokers {
		c.waitView(nd, "every broker registered", func() bool { return len(nd.view().Status().Brokers) == n })
	}
	return c
}

func (c *testCluster) start(id string, tune func(*netio.Config)) *node {
	c.t.Helper()
	fs := vfs.NewMem()
	cfg := fbroker.Config{DataDir: "/data", FS: fs, Net: netio.Config{Addr: "127.0.0.1:0"},
		Cluster: &fbroker.ClusterConfig{BrokerID: id, Store: c.store}}
	if tune != nil {
		cfg.Secure = func(nc *netio.Config, _ *engine.Engine) error { tune(nc); return nil }
	}
	b, err := fbroker.Start(cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	nd := &node{id: id, fs: fs, b: b, eng: b.Engine()}
	c.t.Cleanup(func() { nd.stop(c.t) })
	return nd
}

func (nd *node) view() *control.View { return nd.b.View() }

func (nd *node) addr() string { return nd.b.Addr().String() }

// stop stops the broker; stopping twice is harmless.
func (nd *node) stop(t testing.TB) {
	ctx, cancel := context.WithTimeout(context.Background(), clusterWait)
	defer cancel()
	if err := nd.b.Stop(ctx); err != nil {
		t.Errorf("stopping %s: %v", nd.id, err)
	}
}

func (nd *node) dial(t testing.TB, opts ...client.Option) *client.Client {
	t.Helper()
	cl, err := client.Dial(testCtx(t), nd.addr(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// waitView waits until cond holds, looking again at each change of nd's
// view, for at most clusterWait.
func (c *testCluster) waitView(nd *node, what string, cond func() bool) {
	c.t.Helper()
	deadline := time.NewTimer(clusterWait)
	defer deadline.Stop()
	for {
		changed := nd.view().Changed()
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			c.t.Fatalf("%s: %s, not within %v; its view: %+v", nd.id, what, clusterWait, nd.view().Status())
		}
	}
}

// waitStream waits until every broker knows each shard's leader and has
// opened the shards it holds (its reconcile after its view saw them).
func (c *testCluster) waitStream(s client.Stream, shards int) {
	c.t.Helper()
	id := streamID(s)
	for _, nd := range c.brokers {
		c.waitRound(nd, "stream "+id.String()+" open", func() bool {
			st, err := nd.eng.Stream(id)
			if err != nil {
				return false
			}
			return placedHere(nd, id, shards, st.Held)
		})
	}
}

// placedHere reports whether nd's view knows every shard's leader (itself
// or a registered broker) and nd has opened exactly the shards it holds.
func placedHere(nd *node, id engine.StreamID, shards int, open func(int) bool) bool {
	for i := range shards {
		local, _ := nd.view().Leader(id, i)
		_, elsewhere := nd.view().LeaderBroker(id, i)
		if !local && !elsewhere || nd.view().Holds(id, i) != open(i) {
			return false
		}
	}
	return true
}

// waitRound waits until cond holds, looking again after each of nd's
// reconcile rounds (one follows every change its view sees), for at most
// clusterWait.
func (c *testCluster) waitRound(nd *node, what string, cond func() bool) {
	c.t.Helper()
	deadline := time.NewTimer(clusterWait)
	defer deadline.Stop()
	for {
		ended := nd.b.Reconciled()
		if cond() {
			return
		}
		select {
		case <-ended:
		case <-deadline.C:
			c.t.Fatalf("%s: %s, not within %v", nd.id, what, clusterWait)
		}
	}
}

// leader is the broker that leads the shard, as every view agrees.
func (c *testCluster) leader(id engine.StreamID, shard int) *node {
	c.t.Helper()
	var found []*node
	for _, nd := range c.brokers {
		if local, _ := nd.view().Leader(id, shard); local {
			found = append(found, nd)
		}
	}
	if len(found) != 1 {
		c.t.Fatalf("%s shard %d: %d brokers lead it", id, shard, len(found))
	}
	return found[0]
}

// other is a broker that does not lead the shard.
func (c *testCluster) other(id engine.StreamID, shard int) *node {
	c.t.Helper()
	l := c.leader(id, shard)
	for _, nd := range c.brokers {
		if nd != l {
			return nd
		}
	}
	c.t.Fatal("a cluster of one has no other broker")
	return nil
}

func streamID(s client.Stream) engine.StreamID {
	return engine.StreamID{Tenant: s.Tenant, Namespace: s.Namespace, Name: s.Name}
}

// shardDirs lists the shard directories of a stream on nd's disk.
func shardDirs(t testing.TB, nd *node, id engine.StreamID) []string {
	t.Helper()
	names, err := nd.fs.List("/data/streams/" + id.Tenant + "/" + id.Namespace + "/" + id.Name)
	if err != nil {
		return nil
	}
	slices.Sort(names)
	return names
}

// keyFor finds a key that routes to shard of shards, with prefix.
func keyFor(prefix string, shard, shards int) []byte {
	for i := 0; ; i++ {
		k := fmt.Appendf(nil, "%s-%d", prefix, i)
		if engine.ShardFor(k, shards) == shard {
			return k
		}
	}
}

// readShard subscribes to one shard at nd from the earliest record and
// returns the first n events.
func readShard(t testing.TB, nd *node, s client.Stream, shard, n int) []client.Event {
	t.Helper()
	ctx := testCtx(t)
	sub, err := nd.dial(t).Subscribe(ctx, s, shard, client.SubscribeOptions{Start: client.FromEarliest()})
	if err != nil {
		t.Fatalf("subscribe to shard %d at %s: %v", shard, nd.id, err)
	}
	defer sub.Close()
	var out []client.Event
	for len(out) < n {
		ev, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("shard %d at %s after %d events: %v", shard, nd.id, len(out), err)
		}
		out = append(out, ev)
	}
	return out
}
