package sim

import (
	"fmt"
	"log/slog"
	"slices"
	"testing/synctest"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/cluster/replica"
	"github.com/felixbroker/felix/cluster/replicated"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment/vfs"
)

// broker is one simulated broker: its disk, and while it is up its
// transport, node and one log per shard. Touched by the simulator's
// goroutine only.
type broker struct {
	id    string
	disk  string
	fs    *vfs.MemFS
	tr    *peer.Mem
	node  *replica.Node
	logs  []*shardlog.Log // by shard index; nil while down
	fresh bool            // its disk was replaced (a new disk id) at its last start
	boot  string          // the machine's boot id: a power cut changes it

	// The adapter and its view, while it is up and the run has caches or
	// the engine (cache_broker.go); the caches (the real engine/cache
	// store) and in an engine run the stream engine (engine_broker.go),
	// over the adapter.
	view   *brokerView
	reps   *replicated.Replicas
	caches *cache.Store
	engine *engine.Engine
	// cacheCalls, by cache, lets one client goroutine at a time into the
	// cache's methods (an answer it waits for afterwards does not count):
	// a write that finds its shard led anew rebuilds it holding the
	// shard's writer lock, waiting for a sync the simulator lets go, and a
	// second call waiting on that lock would not be durably blocked, so
	// synctest.Wait would never return (seed 2216). Waiting on the channel
	// is durable.
	cacheCalls []chan struct{}
}

func (b *broker) up() bool { return b.node != nil }

// heartbeatTimeout is how long a broker's heartbeat waits for its grant: a
// nanosecond short of its period, L/4 (a broker's default). At L/4 a
// heartbeat lost at a tick gives up at the next tick, and when a new
// leadership asked for a heartbeat meanwhile (Node.Lead), the node's
// heartbeat goroutine finds the tick and that request ready together and
// takes one at random: whether one heartbeat follows or two was the Go
// runtime's choice (seeds 119 and 356 of TestReplayDivergence). A
// nanosecond short, it gives up first and takes the request; the tick
// waits for the next turn. Off the whole microseconds every other timer
// of a run falls on, it meets none of them.
func heartbeatTimeout(lease time.Duration) time.Duration { return lease/4 - time.Nanosecond }

// partLeadDelay is how long b's secondary parts (a cache's counters) wait
// to fence and adopt once their primary leads, and again to lead once
// their adoption ended: b's place among the brokers, plus one, in
// brokers-plus-one-ths of a step. Both would else happen at a step: the
// adoption's asks beside the primary's first ships (two goroutines sending
// to one follower at one instant: the request ids it sees are the
// scheduler's), and two brokers' counters leaderships whose adoptions
// ended at one step ticking together for the whole run (seed 236). A
// fraction of a step, different on each broker and in whole nanoseconds
// that are not whole microseconds, meets no step and no other timer.
func (w *World) partLeadDelay(b *broker) time.Duration {
	k := slices.Index(w.brokers, b)
	return stepDuration * time.Duration(k+1) / time.Duration(len(w.brokers)+1)
}

// shardID is the cluster's name of shard i of the simulated stream.
func shardID(i int) cluster.ShardID {
	return cluster.ShardID{Object: cluster.ObjectID{Kind: cluster.KindStream, Tenant: "sim", Namespace: "sim", Name: "s"}, Shard: i}
}

func shardDir(i int) string { return fmt.Sprintf("/s/%d", i) }

// start (re)starts b on its disk: it joins the network, opens and holds
// every shard's log, and follows until the control plane says otherwise.
func (w *World) startBroker(b *broker) error {
	tr, err := w.net.Join(b.id)
	if err != nil {
		return err
	}
	node, err := replica.NewNode(replica.NodeConfig{Broker: cluster.Replica{Broker: b.id, DiskID: b.disk}, Transport: tr,
		ControlPlane: func() string { return controlID }, Lease: w.cfg.Lease, HeartbeatTimeout: heartbeatTimeout(w.cfg.Lease),
		PartLeadDelay: w.partLeadDelay(b)})
	if err != nil {
		return err
	}
	tr.Handle(node)
	b.tr, b.node = tr, node
	synctest.Wait() // its first heartbeat leaves now, before it holds anything, whatever the scheduler does
	b.logs = make([]*shardlog.Log, len(w.cfg.Shards))
	w.gate.setOpen(b.id, true) // recovery syncs on this goroutine
	fs := &gatedFS{FS: b.fs, gate: w.gate, broker: b.id}
	quiet := slog.New(slog.DiscardHandler)
	w.openAdapter(b, quiet)
	if w.cfg.Engine {
		if err := w.openEngine(b, fs, quiet); err != nil {
			return fmt.Errorf("%s: opening the engine: %w", b.id, err)
		}
	}
	for i, s := range w.cfg.Shards {
		if w.cfg.Engine || !w.holdsShard(b, shardID(i)) {
			continue
		}
		l, err := shardlog.Open(shardlog.Options{FS: fs, Dir: shardDir(i), Fsync: s.Fsync, SegmentBytes: 1 << 20, BufferBytes: 64 << 10})
		if err != nil {
			return fmt.Errorf("%s: opening shard %d: %w", b.id, i, err)
		}
		b.logs[i] = l
		err = node.Hold(shardID(i), l, replica.FollowerConfig{FS: fs, Dir: shardDir(i), BootID: b.boot, Logger: quiet})
		if err != nil {
			return fmt.Errorf("%s: holding shard %d: %w", b.id, i, err)
		}
	}
	if err := w.openCaches(b, fs, quiet); err != nil {
		return fmt.Errorf("%s: opening the caches: %w", b.id, err)
	}
	w.trace.add("start %s fresh=%v", b.id, b.fresh)
	w.gate.setOpen(b.id, false)
	synctest.Wait() // its logs' and its node's goroutines settle before anything else happens
	return nil
}

// holdsShard reports whether b holds shard id: it is one of its replicas,
// on the disk it has now (or the shard is not placed yet). A broker back
// on a new disk also holds, empty, each shard a replica of its old disk
// was in: the control plane gives that replica's place to the new disk
// at the shard's next generation (cluster/failover replace.go), and the
// broker, which opens its logs only at its start here, holds them ready.
func (w *World) holdsShard(b *broker, id cluster.ShardID) bool {
	if w.cp == nil {
		return true
	}
	s, ok := w.cp.table[id]
	return !ok || slices.ContainsFunc(s.Assignment.Replicas, func(r cluster.Replica) bool {
		return r.Broker == b.id && (r.DiskID == b.disk || b.fresh)
	})
}

// stop closes b's node, transport and logs; a log that closes cleanly
// marks its clean stop, as the broker does.
func (w *World) stop(b *broker) {
	if !b.up() {
		return
	}
	w.gate.setOpen(b.id, true)
	b.tr.Close() // first: the calls in flight fail now, so Close waits on no timer
	b.closeCaches()
	engineRun := b.engine != nil
	b.closeEngine() // its logs too
	b.node.Close()
	for i, l := range b.logs {
		if !engineRun && l != nil && l.Close() == nil {
			_ = replica.MarkCleanStop(b.fs, shardDir(i))
		}
	}
	b.node, b.tr, b.logs = nil, nil, nil
	b.reps, b.view = nil, nil
}

// kill crashes b as a power cut does: its disk keeps what mode leaves of
// what it never synced, and it comes back under another boot.
func (w *World) kill(b *broker, mode vfs.CrashMode) {
	b.boot += "+"
	b.fs.Crash(mode)
	img := b.fs.CrashImage()
	w.stop(b)
	b.fs = img
	w.trace.add("kill %s %v", b.id, mode)
}

// restart starts a killed broker again, on what its disk kept or, when
// newDisk, on an empty disk with a disk id of its own (as datadir draws
// one for a data directory it creates): the broker is then no replica of
// any shard placed on its old disk.
func (w *World) restart(b *broker, newDisk bool) error {
	b.fresh = newDisk
	if newDisk {
		b.fs = vfs.NewMem()
		b.disk += "'"
	}
	if err := w.startBroker(b); err != nil {
		return err
	}
	// It learns its roles as a broker does from the store's watch.
	for _, id := range w.shardIDs() {
		w.queueRole(id, b.id)
	}
	return nil
}
