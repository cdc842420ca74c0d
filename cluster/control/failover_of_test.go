package control

import (
	"testing"

	"github.com/felixbroker/felix/cluster/failover"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
)

// The control plane promotes a cache's shards at the cache's consistency,
// as it does a stream's: a Quorum cache acknowledged writes a majority
// holds, and only a promotion weighed at Quorum keeps them all.
func TestACachesShardsFailOverAtTheCachesConsistency(t *testing.T) {
	for _, tc := range []struct {
		cons engine.Consistency
		want failover.Consistency
	}{{"", failover.Leader}, {engine.ConsistencyLeader, failover.Leader}, {engine.ConsistencyQuorum, failover.Quorum}} {
		e := Entry{Cache: &cache.Config{Shards: 1, Durable: true, ReplicationFactor: 3, Consistency: tc.cons}}
		if o := failoverOf(e); o.consistency != tc.want || !o.replicated {
			t.Errorf("a cache at %q fails over as %+v, want consistency %v", tc.cons, o, tc.want)
		}
	}
}
