package failover

import "github.com/felixbroker/felix/cluster"

// heartbeat records the broker's reports and answers with one Grant: a
// lease for each shard it leads in the stored assignment, at the stored
// generation, that is not being taken from it.
func (m *Machine) heartbeat(ev Heartbeat) {
	m.advance(ev.At)
	m.disks[ev.Broker.Broker] = ev.Broker.DiskID
	g := Grant{To: ev.Broker, HeartbeatSeq: ev.Seq, Epoch: m.epoch, Lease: m.lease}
	for _, r := range ev.Reports {
		s := m.shards[r.Shard]
		if s == nil || !s.known || !s.stored.Assignment.Holds(ev.Broker) {
			continue
		}
		s.reports[ev.Broker] = received{report: r, at: ev.At}
		m.checkReach(s)
		granted := m.grantable(s, ev.Broker, r)
		if granted {
			s.leaseEnd = max(s.leaseEnd, ev.At+m.lease)
			s.grantedGen, s.grantedTo = r.Generation, ev.Broker
			g.Shards = append(g.Shards, GrantedShard{Shard: r.Shard, Generation: r.Generation})
		}
		if r.Leading && ev.Broker == s.stored.Assignment.Leader && r.Generation == s.stored.Assignment.Generation &&
			s.promotion == nil && ev.At < s.leaseEnd {
			s.leaderDurable = max(s.leaderDurable, r.Durable)
		}
	}
	m.actions = append(m.actions, g)
}

// grantable reports whether the broker's report earns it a lease: it is
// the stored leader at the stored generation, leading there (or named
// less than a lease ago), and the shard is known, not being promoted and
// not withheld from it.
func (m *Machine) grantable(s *shard, broker cluster.Replica, r Report) bool {
	a := s.stored.Assignment
	switch {
	case s.stale, s.promotion != nil, s.withheld:
		return false
	case a.Leader == (cluster.Replica{}), a.Leader != broker, r.Generation != a.Generation:
		return false
	case !r.Leading && m.now >= s.leaderSince+m.lease:
		// Named a lease ago and still not leading (a replica that may
		// have lost what it wrote at this generation refuses to lead it
		// again): its lease runs out, and it is replaced.
		return false
	}
	// A store that named two leaders at one generation is not one this
	// package wrote: lease neither of the second.
	return s.grantedGen != a.Generation || s.grantedTo == broker
}

// checkReach withholds the shard from its leader when the leader reports
// that a quorum of its followers has not answered it for more than a
// lease, or when a majority of its
// followers, by their latest reports at the stored generation, have not
// heard from it for more than a lease (or never, a lease after it was
// named). Its leases then run out and it is replaced: a leader its
// followers cannot reach acknowledges nothing at Quorum, and would hold
// the shard forever while it heartbeats.
func (m *Machine) checkReach(s *shard) {
	a := s.stored.Assignment
	if s.withheld || s.promotion != nil || a.Leader == (cluster.Replica{}) {
		return
	}
	if rc, ok := s.reports[a.Leader]; ok && rc.report.Leading && rc.report.Generation == a.Generation &&
		rc.report.LeaderHeard > m.lease {
		s.withheld = true // its followers' answers do not reach it
		return
	}
	followers, cut := 0, 0
	for _, r := range a.Replicas {
		if r == a.Leader {
			continue
		}
		followers++
		if rc, ok := s.reports[r]; ok && rc.report.Generation == a.Generation && !rc.report.Leading && m.unheard(s, rc) {
			cut++
		}
	}
	if followers > 0 && cut >= followers/2+1 {
		s.withheld = true
	}
}

// unheard reports whether a follower's report says it cannot reach its
// leader.
func (m *Machine) unheard(s *shard, rc received) bool {
	heard := rc.report.LeaderHeard
	return heard > m.lease || (heard < 0 && rc.at >= s.leaderSince+m.lease)
}
