package failover

import "github.com/felixbroker/felix/cluster"

// A replica whose broker heartbeats from another disk is gone for good: a
// broker has one data directory, and a new one (wiped, replaced) has a
// new disk id. Its place goes to the broker's new disk, through a
// generation change like any promotion's, so every replica learns the new
// set at once and the leader ships to the new one from its log:
//
//	stored  gen=G   leader=a  replicas=a@1,b@1,c@1     c heartbeats from c@2
//	step 1  gen=G+1 leader=-  replicas=a@1,b@1,c@2  joins=c@2@G+1
//	step 5  gen=G+1 leader=a  replicas=a@1,b@1,c@2  joins=c@2@G+1
//
// The new replica holds nothing written before G+1's start record, which
// its leader commits at the stream's level before serving: until its log
// reaches G+1 its fence answers do not count towards the R-M+1 a
// promotion needs (ballot.enough), though, being a prefix of a leader's
// log, they may still be chosen. Once they reach G+1, everything
// acknowledged before is in its log and what is acknowledged after is on
// a majority of the new set.
//
// The leader may still hold its lease at G when step 1 is written, and a
// Leader stream's leader acknowledges alone: so a promotion begun for a
// replacement chooses nobody until the old leader has answered the fence
// (it stopped acknowledging before it answered) or its lease ran out.

// replaceable reports whether a replica of the stored set is gone and its
// broker heartbeats from a disk the set does not hold yet.
func (m *Machine) replaceable(s *shard) bool {
	for _, r := range s.stored.Assignment.Replicas {
		if d, ok := m.disks[r.Broker]; ok && d != r.DiskID {
			return true
		}
	}
	return false
}

// replaced is a's replicas and joins with each gone replica replaced by
// its broker's new disk, joining at gen.
func (m *Machine) replaced(a cluster.Assignment, gen uint64) ([]cluster.Replica, []cluster.Join) {
	replicas := make([]cluster.Replica, len(a.Replicas))
	var joins []cluster.Join
	for i, r := range a.Replicas {
		if d, ok := m.disks[r.Broker]; ok && d != r.DiskID {
			r = cluster.Replica{Broker: r.Broker, DiskID: d}
			joins = append(joins, cluster.Join{Replica: r, Generation: gen})
		} else if j := a.JoinedAt(r); j != 0 {
			joins = append(joins, cluster.Join{Replica: r, Generation: j})
		}
		replicas[i] = r
	}
	return replicas, joins
}

// counts reports whether a's answer counts towards the R-M+1 a promotion
// needs: its log reaches the generation its replica joined the set at.
func (b ballot) counts(r cluster.Replica, a FenceReplied) bool {
	return uint64(a.LastGen) >= b.joined[r]
}
