package failover

import (
	"cmp"
	"time"

	"github.com/felixbroker/felix/cluster"
)

// shard is what the machine knows of one shard: what is stored, the leases
// granted, the replicas' latest reports, and a promotion under way.
type shard struct {
	known             bool // an Assigned was stepped since the last Removed
	stored            cluster.StoredAssignment
	replicationFactor int
	consistency       Consistency
	acksDurable       bool
	// stale: a write failed, so what is stored is unknown until the next
	// Assigned. Nothing is granted or promoted meanwhile.
	stale bool

	// leaderSince is when the machine learned of the stored (leader,
	// generation): a leader just named has a full lease's time to send its
	// first heartbeat before it is replaced.
	leaderSince time.Duration
	// leaseEnd is the latest (At + L) of a heartbeat granted this shard, at
	// any generation, kept across Removed: no promotion before it.
	leaseEnd time.Duration
	// grantedGen and grantedTo: the last generation granted, and to whom.
	grantedGen uint64
	grantedTo  cluster.Replica
	// withheld: most followers cannot reach the leader, so it is granted
	// this shard no more at this generation.
	withheld bool
	// leaderDurable is the highest durable end a leader reported while it
	// held a lease: what a Leader stream has acknowledged, at least.
	leaderDurable int64
	// written is the highest generation this machine wrote: a promotion
	// takes one above it and above the stored one, so none repeats.
	written uint64

	reports   map[cluster.Replica]received // the latest report of each replica
	promotion *promotion                   // nil: none under way
}

// received is a report and when its heartbeat was received.
type received struct {
	report Report
	at     time.Duration
}

func (m *Machine) shard(id cluster.ShardID) *shard {
	s := m.shards[id]
	if s == nil {
		s = &shard{reports: map[cluster.Replica]received{}}
		m.shards[id] = s
	}
	return s
}

// assigned takes what the store holds, unless it is older than what the
// machine knows. A newer assignment that is not the write in flight means
// someone else wrote: the promotion under way is dropped (its
// compare-and-swap cannot hold).
func (m *Machine) assigned(ev Assigned) {
	s, sa := m.shard(ev.Stored.Shard), ev.Stored
	if s.known && (sa.Assignment.Generation < s.stored.Assignment.Generation || sa.Revision < s.stored.Revision) {
		return
	}
	if p := s.promotion; p != nil && sa.Revision > s.stored.Revision && !(p.seq != 0 && sa.Assignment.Equal(p.written)) {
		m.drop(s)
	}
	s.replicationFactor, s.consistency, s.acksDurable = ev.ReplicationFactor, ev.Consistency, ev.AcksDurable
	s.stale = false
	m.store(s, sa)
}

// store records what the store holds now.
func (m *Machine) store(s *shard, sa cluster.StoredAssignment) {
	old := s.stored.Assignment
	if !s.known || old.Generation != sa.Assignment.Generation || old.Leader != sa.Assignment.Leader {
		s.leaderSince, s.withheld = m.now, false
	}
	sa.Assignment = sa.Assignment.Clone()
	s.stored, s.known = sa, true
}

// removed forgets the shard but for its lease: a shard created again
// under the same name is not promoted before the old lease ends.
func (m *Machine) removed(id cluster.ShardID) {
	s := m.shards[id]
	if s == nil {
		return
	}
	m.drop(s)
	*s = shard{leaseEnd: s.leaseEnd, reports: map[cluster.Replica]received{}}
}

// drop abandons the promotion under way, and forgets its write.
func (m *Machine) drop(s *shard) {
	if p := s.promotion; p != nil && p.seq != 0 {
		delete(m.sent, p.seq)
	}
	s.promotion = nil
}

// expiry is the earliest time a promotion of the shard may begin: a full
// lease after this control plane started, after the last granted
// heartbeat was received, and after its leader was named.
func (m *Machine) expiry(s *shard) time.Duration {
	e := max(m.started+m.lease, s.leaseEnd)
	if s.stored.Assignment.Leader != (cluster.Replica{}) {
		e = max(e, s.leaderSince+m.lease)
	}
	return e
}

// factor is R, the replica count majorities are counted over: the
// replication factor, or the replicas stored where there are more.
func (s *shard) factor() int { return max(s.replicationFactor, len(s.stored.Assignment.Replicas)) }

func compareShards(a, b cluster.ShardID) int {
	x, y := a.Object, b.Object
	return cmp.Or(cmp.Compare(x.Kind, y.Kind), cmp.Compare(x.Tenant, y.Tenant), cmp.Compare(x.Namespace, y.Namespace),
		cmp.Compare(x.Name, y.Name), cmp.Compare(a.Shard, b.Shard))
}
