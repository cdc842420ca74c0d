package broker

import (
	"strconv"

	"github.com/felixbroker/felix/cluster/replica"
	"github.com/felixbroker/felix/cluster/replicated"
	"github.com/felixbroker/felix/observe"
)

// registerReplication adds the lag of each follower of the replicated
// shards this broker leads: in records, and in seconds since the follower
// last held everything its leader had (a follower that keeps up reads 0
// in both, however busy the shard).
func registerReplication(r *observe.Registry, rs *replicated.Replicas) {
	lag := func(emit func(observe.Sample), value func(replica.FollowerLag) float64) {
		for _, s := range rs.Led() {
			for _, fl := range s.Leader.Lag() {
				labels := observe.Label("stream", s.Stream.String()) + "," + observe.Label("shard", strconv.Itoa(s.Index)) +
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
