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

// brokerView is what one broker knows of the cache shards' assignments,
// as the broker's control.View knows them from the store's watch: set by
// the simulator's goroutine (applyTo, one shard a step), read by the
// adapter and the cache on theirs. It is the adapter's replicated.View
// and the cache's engine.Ownership.
type brokerView struct {
	me     cluster.Replica
	caches int

	mu     sync.Mutex
	shards map[cluster.ShardID]cluster.Assignment
}

func newBrokerView(me cluster.Replica, caches int) *brokerView {
	return &brokerView{me: me, caches: caches, shards: map[cluster.ShardID]cluster.Assignment{}}
}

func (v *brokerView) set(id cluster.ShardID, a cluster.Assignment) {
	v.mu.Lock()
	v.shards[id] = a.Clone()
	v.mu.Unlock()
}

// Assigned lists the cache shards this broker is a replica of, in cache
// order.
func (v *brokerView) Assigned() []replicated.Assigned {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []replicated.Assigned
	for k := range v.caches {
		id := cacheShardID(k)
		if a, ok := v.shards[id]; ok && a.Holds(v.me) {
			out = append(out, replicated.Assigned{Shard: id, Assignment: a.Clone()})
		}
	}
	return out
}

// Leader answers for a cache's shard, asked under its "cache:" name (the
// cache's writes) or its own (the adapter's): local when this broker's
// view names it the leader, else the leader's broker id, the simulated
// clients' address of it.
func (v *brokerView) Leader(id engine.StreamID, shard int) (bool, string) {
	name, _ := strings.CutPrefix(id.Name, cache.OwnershipPrefix)
	sid := cluster.ShardID{Object: cluster.ObjectID{Kind: cluster.KindCache, Tenant: id.Tenant, Namespace: id.Namespace, Name: name}, Shard: shard}
	v.mu.Lock()
	a := v.shards[sid]
	v.mu.Unlock()
	return a.Leader == v.me, a.Leader.Broker
}

// heldCaches is a broker's engine.Placement of the caches: the shards
// it was a replica of when it started (the simulator moves no replica).
type heldCaches map[string]bool

func (h heldCaches) Holds(id engine.StreamID, shard int) bool { return h[id.Name] }

// openCaches opens b's cache store on fs, with the shared adapter over
// its node as the caches' engine.PartReplication. It runs inside
// startBroker, the broker's gate open: the logs' recovery syncs here.
func (w *World) openCaches(b *broker, fs vfs.FS, quiet *slog.Logger) error {
	if len(w.cfg.Caches) == 0 {
		return nil
	}
	me := cluster.Replica{Broker: b.id, DiskID: b.disk}
	b.view = newBrokerView(me, len(w.cfg.Caches))
	b.reps = replicated.New(replicated.Config{Replica: me, View: b.view, Node: b.node, Timeout: w.cfg.Lease, BootID: b.boot, Logger: quiet})
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

// cacheRole tells b's adapter shard s's assignment, as a broker's
// reconcile does after its view changed.
func (w *World) cacheRole(b *broker, s cluster.StoredAssignment) {
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
	b.caches, b.reps, b.view, b.cacheCalls = nil, nil, nil, nil
}
