package sim

import (
	"log/slog"
	"strings"
	"sync"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/replicated"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/segment/vfs"
)

// cacheDir is where a broker's cache store keeps its logs.
const cacheDir = "/c"

// brokerView is what one broker knows of the replicated shards'
// assignments (the caches', and the stream's in an engine run), as the
// broker's control.View knows them from the store's watch: set by the
// simulator's goroutine (applyTo, one shard a step), read by the adapter,
// the engine and the cache on theirs. It is the adapter's replicated.View
// and the engine's and the cache's engine.Ownership.
type brokerView struct {
	me      cluster.Replica
	streams int // the stream's shards the engine serves (0: the engine does not run)
	caches  int

	mu     sync.Mutex
	shards map[cluster.ShardID]cluster.Assignment
}

func newBrokerView(me cluster.Replica, streams, caches int) *brokerView {
	return &brokerView{me: me, streams: streams, caches: caches, shards: map[cluster.ShardID]cluster.Assignment{}}
}

func (v *brokerView) set(id cluster.ShardID, a cluster.Assignment) {
	v.mu.Lock()
	v.shards[id] = a.Clone()
	v.mu.Unlock()
}

// Assigned lists the replicated shards this broker is a replica of: the
// stream's in shard order, then the caches' in cache order.
func (v *brokerView) Assigned() []replicated.Assigned {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []replicated.Assigned
	add := func(id cluster.ShardID) {
		if a, ok := v.shards[id]; ok && a.Holds(v.me) {
			out = append(out, replicated.Assigned{Shard: id, Assignment: a.Clone()})
		}
	}
	for i := range v.streams {
		add(shardID(i))
	}
	for k := range v.caches {
		add(cacheShardID(k))
	}
	return out
}

// Leader answers for a shard of the stream (asked by the engine and the
// adapter under streamID) or of a cache, asked under its "cache:" name
// (the cache's writes) or its own (the adapter's): local when this
// broker's view names it the leader, else the leader's broker id, the
// simulated clients' address of it.
func (v *brokerView) Leader(id engine.StreamID, shard int) (bool, string) {
	var sid cluster.ShardID
	if id == streamID {
		sid = shardID(shard)
	} else {
		name, _ := strings.CutPrefix(id.Name, cache.OwnershipPrefix)
		sid = cluster.ShardID{Object: cluster.ObjectID{Kind: cluster.KindCache, Tenant: id.Tenant, Namespace: id.Namespace, Name: name}, Shard: shard}
	}
	v.mu.Lock()
	a := v.shards[sid]
	v.mu.Unlock()
	return a.Leader == v.me, a.Leader.Broker
}

// heldCaches is a broker's engine.Placement of the caches: the shards
// it was a replica of when it started (the simulator moves no replica).
type heldCaches map[string]bool

func (h heldCaches) Holds(id engine.StreamID, shard int) bool { return h[id.Name] }

// openAdapter makes b's view and the shared adapter over its node, when
// the run has anything replicated through it (caches, the engine).
func (w *World) openAdapter(b *broker, quiet *slog.Logger) {
	streams := 0
	if w.cfg.Engine {
		streams = len(w.cfg.Shards)
	}
	if len(w.cfg.Caches) == 0 && streams == 0 {
		return
	}
	me := cluster.Replica{Broker: b.id, DiskID: b.disk}
	b.view = newBrokerView(me, streams, len(w.cfg.Caches))
	b.reps = replicated.New(replicated.Config{Replica: me, View: b.view, Node: b.node, Timeout: w.cfg.Lease, BootID: b.boot, Logger: quiet})
}

// openCaches opens b's cache store on fs, with the shared adapter over
// its node as the caches' engine.PartReplication. It runs inside
// startBroker, the broker's gate open: the logs' recovery syncs here.
func (w *World) openCaches(b *broker, fs vfs.FS, quiet *slog.Logger) error {
	if len(w.cfg.Caches) == 0 {
		return nil
	}
	held := heldCaches{}
	for k := range w.cfg.Caches {
		held[cacheID(k).OwnershipID().Name] = w.holdsShard(b, cacheShardID(k))
	}
	st, err := cache.Open(cache.Options{FS: fs, Dir: cacheDir, SegmentBytes: 1 << 20, BufferBytes: 64 << 10,
		CompactEvery: -1, Catalog: w.catalog, Owner: b.view, Placement: held, Replication: partsOf{reps: b.reps, q: &w.appended, b: b.id},
		QuorumTimeout: w.cfg.Lease, Logger: quiet})
	if err != nil {
		return err
	}
	b.caches = st
	b.cacheCalls = make([]chan struct{}, len(w.cfg.Caches))
	for k := range b.cacheCalls {
		b.cacheCalls[k] = make(chan struct{}, 1)
	}
	return nil
}

// adapterRole tells b's adapter shard s's assignment (a cache's, or in an
// engine run the stream's), as a broker's reconcile does after its view
// changed: every shard held here takes its role again.
func (w *World) adapterRole(b *broker, s cluster.StoredAssignment) {
	if b.reps == nil {
		return
	}
	b.view.set(s.Shard, s.Assignment)
	if err := b.reps.AssignRoles(); err != nil {
		w.trace.add("%s assign %v: %v", b.id, s.Shard.Object.Name, err)
	}
}

// closeCaches closes b's store (its parts released from the node, its
// logs closed), as a broker stopping does before its node goes.
func (b *broker) closeCaches() {
	if b.caches != nil {
		_ = b.caches.Close()
	}
	b.caches, b.cacheCalls = nil, nil
}
