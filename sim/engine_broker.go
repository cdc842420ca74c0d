package sim

import (
	"log/slog"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/segment/vfs"
)

// engineDir is where a broker's stream engine keeps its shards' logs.
const engineDir = "/e"

// heldStreams is a broker's engine.Placement of the stream: the shards it
// was a replica of when it started (the simulator moves no replica).
type heldStreams []bool

func (h heldStreams) Holds(id engine.StreamID, shard int) bool {
	return id == streamID && shard >= 0 && shard < len(h) && h[shard]
}

// streamReplication is b's engine.Replication: the shared adapter's, noting
// each replicated shard's local log in b.logs (the replicas' logs the run
// records at its end, as it does of the logs it opens itself).
type streamReplication struct {
	w *World
	b *broker
}

func (r streamReplication) Replicate(rl engine.ReplicaLog) (engine.ReplicatedLog, error) {
	out, err := r.b.reps.Replicate(rl)
	if err == nil && rl.Stream.ID == streamID && rl.Shard < len(r.b.logs) {
		r.b.logs[rl.Shard] = rl.Log
	}
	return out, err
}

// openEngine opens b's stream engine on fs, over the run's catalog (the
// stream, as the cluster's catalog holds it for every broker), with b's
// view as its ownership, the shards b holds as its placement, and the
// shared adapter over b's node as its replication: the engine opens the
// shards' logs and hands them to the adapter, which holds them on the
// node, as a broker's engine does. It runs inside startBroker, the
// broker's gate open: the logs' recovery syncs here.
func (w *World) openEngine(b *broker, fs vfs.FS, quiet *slog.Logger) error {
	held := make(heldStreams, len(w.cfg.Shards))
	for i := range held {
		held[i] = w.holdsShard(b, shardID(i))
	}
	e, err := engine.Open(engine.Options{FS: fs, Dir: engineDir, SegmentBytes: 1 << 20, BufferBytes: 64 << 10,
		Catalog: w.streams, Owner: b.view, Placement: held, Replication: streamReplication{w: w, b: b}, Logger: quiet})
	if err != nil {
		return err
	}
	b.engine = e
	return nil
}

// closeEngine closes b's engine: its subscriptions end, its shards leave
// the node and their logs close (each marked cleanly stopped when it
// closed cleanly, by the adapter), as a broker stopping does before its
// node goes.
func (b *broker) closeEngine() {
	if b.engine != nil {
		_ = b.engine.Close()
	}
	b.engine = nil
}
