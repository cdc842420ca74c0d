package failover

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/felixbroker/felix/cluster"
)

// Phase is how far a shard's promotion has gone.
type Phase uint8

const (
	// Serving: no promotion under way.
	Serving Phase = iota
	// Clearing: step 1, the write of generation G+1 with no leader, is in
	// flight.
	Clearing
	// Fencing: steps 2 to 4: every replica is fenced at G+1, and the
	// machine waits for enough answers to choose from.
	Fencing
	// Naming: step 5, the write of G+1 with the chosen leader, is in
	// flight.
	Naming
)

func (p Phase) String() string {
	if p > Naming {
		return fmt.Sprintf("phase(%d)", uint8(p))
	}
	return [...]string{"serving", "clearing", "fencing", "naming"}[p]
}

// promotion is one shard's promotion under way.
type promotion struct {
	phase      Phase
	generation uint64 // G+1
	// oldLeader is the stored leader when it began; the zero Replica when
	// it began from a store with none (a promotion left half done), whose
	// old leader this machine cannot know.
	oldLeader cluster.Replica
	target    int64 // a Leader stream's new leader must reach it
	// unreachable: it began because most followers could not reach the
	// old leader, so another replica leads when one may. It is given up a
	// lease after fencing began (avoidOldFor): a replica that never
	// answers (its disk is gone, it is cut off from the control plane)
	// must not keep the shard leaderless once the old leader's answer is
	// enough.
	unreachable bool
	// replacing: it began to give a gone replica's place to its broker's
	// new disk (replace.go) while the old leader may still be leased, so
	// nobody is chosen before the old leader answered or its lease ran out.
	replacing bool

	seq      uint64             // the write in flight (Clearing, Naming); 0: none
	written  cluster.Assignment // what that write stores
	revision int64              // of the leaderless assignment, from step 1's WriteDone

	fencingSince time.Duration // when step 2 began
	fencedAt     time.Duration // when fences were last sent
	answers      map[cluster.Replica]FenceReplied
	chosen       cluster.Replica
}

// fenceResend is how long unanswered fences wait before they are sent
// again.
func (m *Machine) fenceResend() time.Duration { return max(m.lease/4, 1) }

// avoidOldFor is how long a promotion away from a leader its followers
// could not reach waits for the other replicas' answers before it counts
// the old leader's as any other: one lease. Choosing the old leader then
// is safe (its answer is enough by the same rule as always) and, if it is
// still cut off, it is withheld and replaced again; waiting for ever is
// not, as a replica whose disk was replaced never answers.
func (m *Machine) avoidOldFor() time.Duration { return m.lease }

// tick begins the promotions that are due and sends again the fences not
// answered, in shard order.
func (m *Machine) tick(now time.Duration) {
	m.advance(now)
	for _, id := range slices.SortedFunc(maps.Keys(m.shards), compareShards) {
		s := m.shards[id]
		switch p := s.promotion; {
		case p == nil:
			if !s.known || s.stale {
				continue
			}
			if due := m.now >= m.expiry(s); due || m.replaceable(s) {
				m.begin(id, s, !due)
			}
		case p.phase == Fencing:
			// What changed without an answer: the old leader's avoidance
			// may be over, a replica may be known gone.
			if p.unreachable && m.now >= p.fencingSince+m.avoidOldFor() {
				p.unreachable = false
			}
			m.decide(id, s, p)
			if p.phase == Fencing && m.now >= p.fencedAt+m.fenceResend() {
				m.fence(id, s, p)
			}
		}
	}
}

// begin is step 1: write generation G+1 with no leader, before anything
// else, so the old leader's generation is closed in the store. A replica
// that is gone gives its place to its broker's new disk (replace.go);
// replacing says that is why it began, before the leader's lease ran out.
func (m *Machine) begin(id cluster.ShardID, s *shard, replacing bool) {
	a := s.stored.Assignment
	p := &promotion{phase: Clearing, generation: max(a.Generation, s.written) + 1, oldLeader: a.Leader,
		target: s.leaderDurable, unreachable: s.withheld, replacing: replacing}
	s.promotion = p
	replicas, joins := m.replaced(a, p.generation)
	m.write(id, s, p, cluster.Assignment{Replicas: replicas, Generation: p.generation, Incarnation: a.Incarnation,
		Joins: joins}, s.stored.Revision)
}

func (m *Machine) write(id cluster.ShardID, s *shard, p *promotion, a cluster.Assignment, expected int64) {
	m.seq++
	p.seq, p.written = m.seq, a.Clone()
	s.written = max(s.written, a.Generation)
	m.sent[m.seq] = id
	m.actions = append(m.actions, Write{Seq: m.seq, Epoch: m.epoch, Shard: id, Assignment: a.Clone(),
		ExpectedRevision: expected})
}

// writeDone moves the promotion on: after step 1, fence; after step 5,
// it is done and the new leader is leased from its next heartbeat.
func (m *Machine) writeDone(ev WriteDone) {
	s, p := m.promotionOf(ev.Seq)
	if p == nil {
		return
	}
	p.seq = 0
	m.store(s, cluster.StoredAssignment{Shard: s.stored.Shard, Assignment: p.written, Revision: ev.Revision})
	switch p.phase {
	case Clearing:
		p.phase, p.revision, p.answers = Fencing, ev.Revision, map[cluster.Replica]FenceReplied{}
		p.fencingSince = m.now
		m.fence(s.stored.Shard, s, p)
	case Naming:
		s.promotion = nil
	}
}

// writeFailed drops the promotion: what is stored is unknown until the
// next Assigned, which begins it again from there.
func (m *Machine) writeFailed(seq uint64) {
	if s, p := m.promotionOf(seq); p != nil {
		m.drop(s)
		s.stale = true
	}
}

// promotionOf finds the promotion whose write seq answers, forgetting the
// write; nil for an answer to a write already answered or dropped.
func (m *Machine) promotionOf(seq uint64) (*shard, *promotion) {
	id, ok := m.sent[seq]
	delete(m.sent, seq)
	if !ok {
		return nil, nil
	}
	s := m.shards[id]
	if p := s.promotion; p != nil && p.seq == seq {
		return s, p
	}
	return nil, nil
}

// fence is step 2: fence every replica that has not answered, the old
// leader too, in replica order.
func (m *Machine) fence(id cluster.ShardID, s *shard, p *promotion) {
	p.fencedAt = m.now
	for _, r := range s.stored.Assignment.Replicas {
		if _, ok := p.answers[r]; !ok {
			m.actions = append(m.actions, Fence{Shard: id, To: r, Generation: p.generation, Epoch: m.epoch})
		}
	}
}

// fenceReplied records an answer to this promotion's fence and, once the
// answers are enough, chooses the new leader and writes it (step 5).
func (m *Machine) fenceReplied(ev FenceReplied) {
	s := m.shards[ev.Shard]
	if s == nil || s.promotion == nil {
		return
	}
	p := s.promotion
	if p.phase != Fencing || ev.Generation != p.generation || ev.Epoch != m.epoch || !s.stored.Assignment.Holds(ev.From) {
		return
	}
	p.answers[ev.From] = ev
	m.decide(ev.Shard, s, p)
}

// decide is steps 3 to 5: once the answers are enough, it chooses the new
// leader and writes it.
func (m *Machine) decide(id cluster.ShardID, s *shard, p *promotion) {
	if _, answered := p.answers[p.oldLeader]; p.replacing && !answered && m.now < m.expiry(s) {
		return // the old leader may still acknowledge at its generation
	}
	a := s.stored.Assignment
	b := ballot{replicas: a.Replicas, factor: s.factor(), oldLeader: p.oldLeader,
		leaderStream: s.consistency == Leader, target: p.target, answers: p.answers, avoidOld: p.unreachable,
		acksDurable: s.acksDurable, gone: m.gone(a.Replicas), joined: joinedOf(a)}
	chosen, ok := b.choose()
	if !ok {
		return
	}
	p.phase, p.chosen = Naming, chosen
	m.write(id, s, p, cluster.Assignment{Replicas: leaderFirst(a.Replicas, chosen), Leader: chosen,
		Generation: p.generation, Incarnation: a.Incarnation, Joins: a.Joins}, p.revision)
}

// joinedOf is the generation each replica of a that joined after
// placement joined at; nil when none did.
func joinedOf(a cluster.Assignment) map[cluster.Replica]uint64 {
	var out map[cluster.Replica]uint64
	for _, j := range a.Joins {
		if out == nil {
			out = map[cluster.Replica]uint64{}
		}
		out[j.Replica] = j.Generation
	}
	return out
}

// gone is which of replicas have their broker heartbeating from another
// disk; nil when none.
func (m *Machine) gone(replicas []cluster.Replica) map[cluster.Replica]bool {
	var out map[cluster.Replica]bool
	for _, r := range replicas {
		if d, ok := m.disks[r.Broker]; ok && d != r.DiskID {
			if out == nil {
				out = map[cluster.Replica]bool{}
			}
			out[r] = true
		}
	}
	return out
}

// leaderFirst is the replicas with the leader first, the others in their
// order.
func leaderFirst(replicas []cluster.Replica, leader cluster.Replica) []cluster.Replica {
	out := make([]cluster.Replica, 0, len(replicas))
	out = append(out, leader)
	for _, r := range replicas {
		if r != leader {
			out = append(out, r)
		}
	}
	return out
}
