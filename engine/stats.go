package engine

import "github.com/felixbroker/felix/engine/shardlog"

// ShardStats is a snapshot of one open shard, for metrics.
type ShardStats struct {
	Stream      StreamID
	Shard       int
	Durable     bool
	Start, End  int64
	Subscribers int // live subscriptions registered on the shard
	// Log and Recovery are the durable log's figures (zero for a shard
	// kept in memory): its counters and position, and what its Open found.
	Log      shardlog.Stats
	Recovery shardlog.RecoveryInfo
}

// Stats returns a snapshot of every shard open here: a shard this broker
// does not hold (Options.Placement) has no log here and is left out. It takes the stream table's
// read lock, then each shard's subscriber lock in turn, briefly; meant for
// a metrics scrape, not a hot path.
func (e *Engine) Stats() []ShardStats {
	e.mu.RLock()
	streams := make([]*Stream, 0, len(e.streams))
	for _, s := range e.streams {
		streams = append(streams, s)
	}
	e.mu.RUnlock()
	var out []ShardStats
	for _, s := range streams {
		for sh := range s.openShards() {
			out = append(out, sh.stats())
		}
	}
	return out
}

func (sh *Shard) stats() ShardStats {
	st := ShardStats{Stream: sh.stream.info.ID, Shard: sh.index, Start: sh.log.Start(), End: sh.log.End()}
	sh.subMu.Lock()
	st.Subscribers = len(sh.subs)
	sh.subMu.Unlock()
	if d, ok := sh.log.(*diskLog); ok {
		l := d.current()
		st.Durable, st.Log, st.Recovery = true, l.Stats(), l.Recovery()
	}
	return st
}
