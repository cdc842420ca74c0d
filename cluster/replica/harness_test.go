package replica

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/failover"
	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// testCluster is several brokers replicating shards under the real
// failover machine, in one process, inside a testing/synctest bubble:
// each broker a real shardlog.Log per shard on its own MemFS (which can
// crash), a Node, and an in-memory peer transport whose links the test
// cuts and freezes. Time is fake; nothing sleeps for real.
type testCluster struct {
	t       *testing.T
	net     *peer.Network
	lease   time.Duration
	timeout time.Duration
	fsync   shardlog.FsyncMode
	cp      *testControl
	brokers map[string]*testBroker
	shards  map[cluster.ShardID]shardSpec

	// Options a test may set before it creates shards (nil: none).
	//
	// onCommit, when set, is each leadership's LeadOptions.OnCommit.
	onCommit func(broker string, sid cluster.ShardID, first, next int64, records []byte)
	// wrapFS, when set, is the file system broker's shard logs and
	// fence files use, around its MemFS.
	wrapFS func(broker string, fs *vfs.MemFS) vfs.FS

	mu   sync.Mutex // guards each broker's node: apply reads it on the control plane's goroutine
	cpMu sync.Mutex
	// cpID is the broker id the brokers heartbeat (controlID unless a
	// test moves them to another control plane); guarded by cpMu.
	cpID string
	// others are the control planes started beside cp (takeOver), closed
	// with it.
	others []*testControl
}

type shardSpec struct {
	consistency Consistency
	replicas    []string
}

// testBroker is one broker: its disk, its logs, its node.
type testBroker struct {
	id   string
	disk string
	fs   *vfs.MemFS
	tr   *peer.Mem
	node *Node
	logs map[cluster.ShardID]*shardlog.Log
	// fresh: its disk was replaced at its last start (a wiped disk that
	// kept its id): its fence answers say so. A disk placed on at a
	// shard's creation is not fresh: it has held the shard from offset 0.
	fresh bool
	boot  string // the machine's boot id (BootID): a power cut (kill) changes it
}

const testLease = 2 * time.Second

// newTestCluster starts the brokers named and the control plane; call
// inside synctest.Test.
func newTestCluster(t *testing.T, brokers ...string) *testCluster {
	c := &testCluster{t: t, net: peer.NewNetwork(peer.NetworkOptions{Seed: 1}), lease: testLease, timeout: time.Second,
		fsync: shardlog.OnCommit(), brokers: map[string]*testBroker{}, shards: map[cluster.ShardID]shardSpec{}, cpID: controlID}
	c.cp = newTestControl(t, c, 7)
	for _, id := range brokers {
		c.brokers[id] = &testBroker{id: id, disk: "disk-" + id, fs: vfs.NewMem(), boot: "boot-" + id}
		c.startBroker(id)
	}
	t.Cleanup(c.close)
	return c
}

func (c *testCluster) close() {
	for _, cp := range c.others {
		cp.close()
	}
	c.cp.close()
	for _, b := range c.brokers {
		c.stopBroker(b)
	}
	c.net.Close()
}

func testShard(n int) cluster.ShardID {
	return cluster.ShardID{Object: cluster.ObjectID{Kind: cluster.KindStream, Tenant: "acme", Namespace: "prod", Name: "orders"}, Shard: n}
}

// startBroker (re)starts broker id on its disk: it joins the network,
// opens every shard log it holds and follows (the control plane's next
// promotion or assignment gives it a role).
func (c *testCluster) startBroker(id string) {
	b := c.brokers[id]
	tr, err := c.net.Join(id)
	if err != nil {
		c.t.Fatal(err)
	}
	node, err := NewNode(NodeConfig{Broker: cluster.Replica{Broker: id, DiskID: b.disk}, Transport: tr,
		ControlPlane: c.controlPlane, Lease: c.lease})
	if err != nil {
		c.t.Fatal(err)
	}
	tr.Handle(node)
	c.mu.Lock() // apply, on the control plane's goroutine, reads b.node
	b.tr, b.node = tr, node
	c.mu.Unlock()
	b.logs = map[cluster.ShardID]*shardlog.Log{}
	for sid, spec := range c.shards {
		if slices.Contains(spec.replicas, id) {
			c.holdShard(b, sid)
		}
	}
}

// holdShard opens b's log of sid and registers it with b's node.
func (c *testCluster) holdShard(b *testBroker, sid cluster.ShardID) {
	dir := fmt.Sprintf("/%s/%d", sid.Object.Name, sid.Shard)
	var fs vfs.FS = b.fs
	if c.wrapFS != nil {
		fs = c.wrapFS(b.id, b.fs)
	}
	l, err := shardlog.Open(shardlog.Options{FS: fs, Dir: dir, Fsync: c.fsync, SegmentBytes: 1 << 20, BufferBytes: 64 << 10})
	if err != nil {
		c.t.Fatalf("%s: opening %v: %v", b.id, sid, err)
	}
	b.logs[sid] = l
	quiet := slog.New(slog.DiscardHandler)
	if err := b.node.Hold(sid, l, FollowerConfig{FS: fs, Dir: dir, NewDisk: b.fresh, BootID: b.boot, Logger: quiet}); err != nil {
		c.t.Fatalf("%s: holding %v: %v", b.id, sid, err)
	}
}

func (c *testCluster) stopBroker(b *testBroker) {
	c.mu.Lock()
	node := b.node
	b.node = nil
	c.mu.Unlock()
	if node == nil {
		return
	}
	node.Close()
	b.tr.Close()
	for sid, l := range b.logs {
		if l.Close() == nil { // closed cleanly (a crashed disk refuses): say so, as the broker does
			_ = MarkCleanStop(b.fs, fmt.Sprintf("/%s/%d", sid.Object.Name, sid.Shard))
		}
	}
}

// kill crashes broker id as a power cut does: its transport goes, its
// disk keeps only what was synced, and it comes back under another boot.
func (c *testCluster) kill(id string) {
	b := c.brokers[id]
	b.boot += "+"
	b.fs.Crash(vfs.DropUnsynced)
	img := b.fs.CrashImage()
	c.stopBroker(b)
	b.fs = img
}

// restart starts a killed broker again on what its disk kept.
func (c *testCluster) restart(id string) {
	b := c.brokers[id]
	b.fresh = false
	c.startBroker(id)
}

// restartOnNewDisk starts a killed broker again on a replaced, empty
// disk that kept its id: its fence answers carry NewDisk.
func (c *testCluster) restartOnNewDisk(id string) {
	b := c.brokers[id]
	b.fs, b.fresh = vfs.NewMem(), true
	c.startBroker(id)
}

// restartOnAnotherDisk starts a killed broker again on a new, empty
// disk with a new id, as a broker on a wiped or replaced data directory
// starts: its old replicas are gone, and the control plane gives their
// places to the new disk.
func (c *testCluster) restartOnAnotherDisk(id string) {
	b := c.brokers[id]
	b.fs, b.fresh, b.disk = vfs.NewMem(), false, b.disk+"+"
	c.startBroker(id)
}

// controlPlane is the broker id the brokers heartbeat now.
func (c *testCluster) controlPlane() string {
	c.cpMu.Lock()
	defer c.cpMu.Unlock()
	return c.cpID
}

// heartbeatTo points every broker's heartbeats at control plane id.
func (c *testCluster) heartbeatTo(id string) {
	c.cpMu.Lock()
	c.cpID = id
	c.cpMu.Unlock()
}

// createShard places sid on replicas (leader first) at generation 1.
func (c *testCluster) createShard(sid cluster.ShardID, consistency Consistency, replicas ...string) {
	c.shards[sid] = shardSpec{consistency: consistency, replicas: replicas}
	a := cluster.Assignment{Generation: 1, Incarnation: 1}
	for _, id := range replicas {
		a.Replicas = append(a.Replicas, cluster.Replica{Broker: id, DiskID: c.brokers[id].disk})
		c.holdShard(c.brokers[id], sid)
	}
	a.Leader = a.Replicas[0]
	c.cp.place(sid, a, consistency, c.fsync.Kind == shardlog.FsyncOnCommit)
	c.apply(cluster.StoredAssignment{Shard: sid, Assignment: a})
}

// apply gives every live broker its role in a written assignment.
func (c *testCluster) apply(s cluster.StoredAssignment) {
	c.mu.Lock()
	defer c.mu.Unlock()
	spec := c.shards[s.Shard]
	for _, r := range s.Assignment.Replicas {
		b := c.brokers[r.Broker]
		if b == nil || b.node == nil || b.disk != r.DiskID {
			continue // down, or back on another disk: not this replica
		}
		if r != s.Assignment.Leader {
			b.node.Follow(s.Shard, s.Assignment.Generation)
			continue
		}
		var followers []string
		for _, o := range s.Assignment.Replicas {
			if o != r {
				followers = append(followers, o.Broker)
			}
		}
		var onCommit func(first, next int64, records []byte)
		if c.onCommit != nil {
			id, sid := r.Broker, s.Shard
			onCommit = func(first, next int64, records []byte) { c.onCommit(id, sid, first, next, records) }
		}
		var joined map[string]uint64
		for _, j := range s.Assignment.Joins {
			if joined == nil {
				joined = map[string]uint64{}
			}
			joined[j.Replica.Broker] = j.Generation
		}
		if _, err := b.node.Lead(s.Shard, s.Assignment.Generation, LeadOptions{Followers: followers, Joined: joined,
			Consistency: spec.consistency, Timeout: c.timeout, OnCommit: onCommit}); err != nil {
			c.t.Logf("%s: leading %v at %d: %v", r.Broker, s.Shard, s.Assignment.Generation, err)
		}
	}
}

// leader is the broker that leads sid now, "" when none does.
func (c *testCluster) leader(sid cluster.ShardID) string {
	return c.cp.assignment(sid).Leader.Broker
}

// awaitLeader waits (in fake time) until sid is led by a broker other
// than not, and returns it; it fails the test past within.
func (c *testCluster) awaitLeader(sid cluster.ShardID, not string, within time.Duration) string {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if l := c.leader(sid); l != "" && l != not && c.brokers[l].node != nil && c.brokers[l].node.Leader(sid) != nil {
			return l
		}
		time.Sleep(c.lease / 20) // fake time: advances only when every goroutine waits
	}
	var st failover.Status
	c.cp.do(func() { st = c.cp.m.Status() })
	c.t.Fatalf("no leader other than %q for %v within %v: %v\ncontrol plane: %+v", not, sid, within, c.cp.assignment(sid), st)
	return ""
}

// publish appends one record on sid's current leader and waits for its
// acknowledgement: its offset, or why it was refused.
func (c *testCluster) publish(sid cluster.ShardID, value string) (int64, error) {
	l := c.brokers[c.leader(sid)]
	if l == nil || l.node == nil {
		return 0, errors.New("no live leader")
	}
	return c.publishOn(l.id, sid, value)
}

// publishOn appends on broker id's leadership of sid, wherever the
// control plane thinks leadership is.
func (c *testCluster) publishOn(id string, sid cluster.ShardID, value string) (int64, error) {
	b := c.brokers[id]
	if b.node == nil {
		return 0, errors.New(id + " is down")
	}
	ld := b.node.Leader(sid)
	if ld == nil {
		return 0, ErrNotLeader
	}
	w := make(waitChan, 1)
	if _, err := ld.Append([]shardlog.Entry{{Value: []byte(value), Timestamp: time.Now().UnixNano()}}, 0, w); err != nil {
		return 0, err
	}
	r := <-w
	return r.first, r.err
}

type waitResult struct {
	first int64
	err   error
}

// waitChan is a shardlog.Waiter a test goroutine waits on.
type waitChan chan waitResult

func (w waitChan) Committed(first, _ int64, err error) { w <- waitResult{first, err} }

// values reads broker id's log of sid: every record's value but the
// generation start records, in offset order.
func (c *testCluster) values(id string, sid cluster.ShardID) []string {
	c.t.Helper()
	l := c.brokers[id].logs[sid]
	var out []string
	for from := l.Start(); from < l.End(); {
		b, next, err := l.Read(from, 1<<20, nil)
		if err != nil {
			c.t.Fatalf("%s: reading %v at %d: %v", id, sid, from, err)
		}
		for it := segment.NewIter(b); ; {
			rec, ok := it.Next()
			if !ok {
				break
			}
			if rec.Flags&FlagGenerationStart == 0 {
				out = append(out, string(rec.Value))
			}
		}
		from = next
	}
	return out
}

// inCluster runs test in a synctest bubble with a cluster of brokers.
func inCluster(t *testing.T, brokers []string, test func(t *testing.T, c *testCluster)) {
	synctest.Test(t, func(t *testing.T) { test(t, newTestCluster(t, brokers...)) })
}
