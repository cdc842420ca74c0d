package broker

import (
	"strconv"

	"github.com/felixbroker/felix/cluster/replica"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/observe"
)

// registerReplication adds the lag of each follower of the replicated
// shards this broker leads: in records, and in seconds since the follower
// last held everything its leader had (a follower that keeps up reads 0
// in both, however busy the shard).
func registerReplication(r *observe.Registry, rs *replicas) {
	lag := func(emit func(observe.Sample), value func(replica.FollowerLag) float64) {
		for _, s := range rs.led() {
			for _, fl := range s.leader.Lag() {
				labels := observe.Label("stream", s.stream.String()) + "," + observe.Label("shard", strconv.Itoa(s.index)) +
					"," + observe.Label("follower", fl.Broker)
				emit(observe.Sample{Labels: labels, Value: value(fl)})
			}
		}
	}
	r.Collect("felix_broker_replication_lag_records", observe.TypeGauge,
		"Records the follower has not acknowledged of a replicated shard this broker leads, by stream, shard and follower.",
		func(emit func(observe.Sample)) {
			lag(emit, func(fl replica.FollowerLag) float64 { return float64(fl.Records) })
		})
	r.Collect("felix_broker_replication_lag_seconds", observe.TypeGauge,
		"Seconds since the follower last held every record of a replicated shard this broker leads (0 while it does).",
		func(emit func(observe.Sample)) {
			lag(emit, func(fl replica.FollowerLag) float64 { return fl.Behind.Seconds() })
		})
}

// ledShard is one replicated shard this broker leads now.
type ledShard struct {
	stream engine.StreamID
	index  int
	leader *replica.Leader
}

// led lists the replicated shards this broker leads now.
func (r *replicas) led() []ledShard {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []ledShard
	for _, s := range r.shards {
		if l := s.leader.Load(); l != nil {
			out = append(out, ledShard{stream: s.stream, index: s.index, leader: l})
		}
	}
	return out
}
