package cluster

import (
	"maps"
	"slices"
)

// shard is what the machine knows of one shard: what it decided, what the
// store holds, and the write in flight between the two.
type shard struct {
	wanted bool       // the shard should exist (its object does)
	want   Assignment // the decision, when wanted

	stored   Assignment // what the store holds, when revision > 0
	revision int64      // the key's modification revision; 0: no key
	sending  uint64     // the Seq of the write or delete in flight; 0: none

	// generation is the highest this machine has decided or read for the
	// shard: a new decision takes the next, so none is reused even when an
	// object is created again before its old assignment is gone.
	generation uint64
}

// sent is a Write or Delete not answered yet.
type sent struct {
	shard      ShardID
	write      bool // false: a Delete
	assignment Assignment
}

// decide records a new placement for a shard that has none.
func (m *Machine) decide(id ShardID, incarnation int64, replicas []Replica) {
	s := m.shards[id]
	if s == nil {
		s = &shard{}
		m.shards[id] = s
	}
	s.generation++
	s.wanted = true
	s.want = Assignment{Replicas: replicas, Leader: replicas[0], Generation: s.generation, Incarnation: incarnation}
	m.load.add(s.want)
	m.dirty[id] = struct{}{}
}

// unwant records that a shard should no longer exist.
func (m *Machine) unwant(id ShardID) {
	s := m.shards[id]
	if s == nil || !s.wanted {
		return
	}
	m.load.remove(s.want)
	s.wanted, s.want = false, Assignment{}
	m.dirty[id] = struct{}{}
}

// flush turns the dirty shards' decisions into actions, in shard order.
func (m *Machine) flush() {
	for _, id := range slices.SortedFunc(maps.Keys(m.dirty), compareShards) {
		m.reconcile(id)
	}
	clear(m.dirty)
}

// reconcile sends what brings the store to the decision, unless a write
// is already in flight for the shard (its answer makes the shard dirty
// again).
func (m *Machine) reconcile(id ShardID) {
	s := m.shards[id]
	switch {
	case s.sending != 0:
	case !s.wanted && s.revision == 0:
		delete(m.shards, id)
	case !s.wanted:
		m.send(id, s, sent{shard: id})
		m.actions = append(m.actions, Delete{Seq: m.seq, Epoch: m.epoch, Shard: id, ExpectedRevision: s.revision})
	case s.revision == 0 || !s.stored.Equal(s.want):
		a := s.want.Clone()
		m.send(id, s, sent{shard: id, write: true, assignment: a})
		m.actions = append(m.actions, Write{Seq: m.seq, Epoch: m.epoch, Shard: id, Assignment: a.Clone(),
			ExpectedRevision: s.revision})
	}
}

func (m *Machine) send(id ShardID, s *shard, w sent) {
	m.seq++
	s.sending = m.seq
	m.sent[m.seq] = w
}
