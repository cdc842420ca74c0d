package failover

import (
	"maps"
	"slices"
	"time"

	"github.com/felixbroker/felix/cluster"
)

// Status is a copy of what the machine knows, for tests and operators.
// The caller owns it.
type Status struct {
	Epoch  int64
	Lease  time.Duration
	Now    time.Duration // the latest time stepped in
	Shards []ShardStatus // the known shards, in shard order
}

// ShardStatus is one shard's leases and promotion.
type ShardStatus struct {
	Stored            cluster.StoredAssignment
	ReplicationFactor int
	Consistency       Consistency
	Stale             bool          // a write failed: waiting for the next Assigned
	Expiry            time.Duration // the earliest a promotion may begin
	Withheld          bool          // its followers cannot reach the leader: no more grants
	LeaderDurable     int64         // the highest durable end a leased leader reported
	Promotion         PromotionStatus
}

// PromotionStatus is a promotion under way; the zero value (Serving) when
// none is.
type PromotionStatus struct {
	Phase      Phase
	Generation uint64
	OldLeader  cluster.Replica
	Target     int64          // for a Leader stream
	Answers    []FenceReplied // in replica order
	Chosen     cluster.Replica
}

// Status copies the machine's view.
func (m *Machine) Status() Status {
	st := Status{Epoch: m.epoch, Lease: m.lease, Now: m.now}
	for _, id := range slices.SortedFunc(maps.Keys(m.shards), compareShards) {
		if s := m.shards[id]; s.known {
			st.Shards = append(st.Shards, m.shardStatus(s))
		}
	}
	return st
}

func (m *Machine) shardStatus(s *shard) ShardStatus {
	ss := ShardStatus{Stored: s.stored, ReplicationFactor: s.replicationFactor, Consistency: s.consistency,
		Stale: s.stale, Expiry: m.expiry(s), Withheld: s.withheld, LeaderDurable: s.leaderDurable}
	ss.Stored.Assignment = s.stored.Assignment.Clone()
	if p := s.promotion; p != nil {
		ss.Promotion = PromotionStatus{Phase: p.phase, Generation: p.generation, OldLeader: p.oldLeader,
			Target: p.target, Chosen: p.chosen}
		for _, r := range s.stored.Assignment.Replicas {
			if a, ok := p.answers[r]; ok {
				ss.Promotion.Answers = append(ss.Promotion.Answers, a)
			}
		}
	}
	return ss
}
