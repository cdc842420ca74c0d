package replica

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/ring"
	"github.com/felixbroker/felix/segment/vfs"
)

// tcpCluster is brokers replicating one shard over loopback peer.TCP, the
// production transport, in real time (no synctest bubble: its sockets
// are real). There is no control plane: the first broker leads at
// generation 1 under a lease the test grants itself, and the followers
// meet their leader through its first REPLICATE (they are fenced at 0),
// as a promoted leader's followers do. Each broker's log is a real
// shardlog.Log on the operating system's file system through a ring
// driver, as a broker's is (a MemFS copies what it writes and syncs, to
// crash it later: its allocations would hide the transport's), in a
// directory of its own under dir.
type tcpCluster struct {
	t       testing.TB
	mu      sync.Mutex // guards addrs: Resolve is called on dialing goroutines
	addrs   map[string]string
	brokers map[string]*tcpBroker
	order   []string
}

type tcpBroker struct {
	tr   *peer.TCP
	node *Node
	log  *shardlog.Log
}

// tcpShard is the shard a tcpCluster replicates. Its names are longer
// than the 32 bytes Go converts to a string on the stack, as a real
// tenant's may be: a lookup by name that converts them allocates.
var tcpShard = cluster.ShardID{Object: cluster.ObjectID{Kind: cluster.KindStream, Tenant: "acme-industries-international-holdings",
	Namespace: "production-eu-west-1-payments-team", Name: "orders-settled-by-the-card-processor-v2"}, Shard: 3}

// newTCPCluster starts the brokers named, the first leading the shard at
// consistency (its followers synchronise with it as its first REPLICATEs
// reach them), and closes them when the test ends.
func newTCPCluster(tb testing.TB, dir string, consistency Consistency, fsync shardlog.FsyncMode, brokers ...string) *tcpCluster {
	tb.Helper()
	d, err := ring.Open(ring.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	c := &tcpCluster{t: tb, addrs: map[string]string{}, brokers: map[string]*tcpBroker{}, order: brokers}
	tb.Cleanup(func() { c.close(); d.Close() })
	fs := vfs.NewOS(d)
	for _, id := range brokers {
		c.start(id, fs, filepath.Join(dir, id), fsync)
	}
	lead := c.brokers[brokers[0]]
	lead.node.mu.Lock()
	h := lead.node.logs[logKey{id: tcpShard}]
	lead.node.mu.Unlock()
	h.lease.Grant(time.Now(), 4*time.Hour, 1, 1) // no control plane: longer than any test
	if _, err := lead.node.Lead(tcpShard, 1, LeadOptions{Followers: brokers[1:], Consistency: consistency,
		Timeout: 10 * time.Second}); err != nil {
		tb.Fatal(err)
	}
	return c
}

func (c *tcpCluster) start(id string, fs vfs.FS, dir string, fsync shardlog.FsyncMode) {
	tr, err := peer.Listen(peer.Config{ID: id, Addr: "127.0.0.1:0", Resolve: c.resolve})
	if err != nil {
		c.t.Fatal(err)
	}
	c.mu.Lock()
	c.addrs[id] = tr.Addr().String()
	c.mu.Unlock()
	b := &tcpBroker{tr: tr}
	c.brokers[id] = b
	b.node, err = NewNode(NodeConfig{Broker: cluster.Replica{Broker: id, DiskID: "disk-" + id}, Transport: tr,
		ControlPlane: func() string { return "" }, Lease: time.Hour})
	if err != nil {
		c.t.Fatal(err)
	}
	tr.Handle(b.node)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		c.t.Fatal(err)
	}
	// A sparse index entry a megabyte rather than 4 KiB: the segment's
	// index grows as it fills (an allocation per doubling), a cost of the
	// bytes written that would blur the round trip's own figure.
	b.log, err = shardlog.Open(shardlog.Options{FS: fs, Dir: dir, Fsync: fsync, SegmentBytes: 64 << 20, BufferBytes: 1 << 20,
		IndexIntervalBytes: 1 << 20})
	if err != nil {
		c.t.Fatal(err)
	}
	if err := b.node.Hold(tcpShard, b.log, FollowerConfig{FS: fs, Dir: dir, Logger: slog.New(slog.DiscardHandler)}); err != nil {
		c.t.Fatal(err)
	}
}

func (c *tcpCluster) resolve(id string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.addrs[id]; ok {
		return a, nil
	}
	return "", fmt.Errorf("no broker %q", id)
}

// leader is the first broker's leadership of the shard.
func (c *tcpCluster) leader() *Leader { return c.brokers[c.order[0]].node.Leader(tcpShard) }

func (c *tcpCluster) close() {
	for _, id := range c.order {
		if b := c.brokers[id]; b != nil && b.node != nil {
			b.node.Close()
		}
	}
	for _, id := range c.order {
		if b := c.brokers[id]; b != nil {
			b.tr.Close()
			if b.log != nil {
				b.log.Close()
			}
		}
	}
}
