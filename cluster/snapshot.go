package cluster

import (
	"maps"
	"slices"
)

// resync replaces everything the machine knew with the store's state,
// then places the shards that have no assignment and deletes the
// assignments whose object is gone. Assignments that exist are kept as
// they are, whichever brokers are live.
func (m *Machine) resync(snap Snapshot) {
	m.reset()
	for _, b := range snap.Brokers {
		m.brokers[b.ID] = b
	}
	for _, o := range snap.Objects {
		m.objects[o.ID] = o
	}
	for _, a := range snap.Assignments {
		m.adopt(a)
	}
	m.synced = true
	for _, id := range slices.SortedFunc(maps.Keys(m.objects), compareObjects) {
		m.place(id)
	}
}

// adopt takes a stored assignment as the decision for its shard, or marks
// it for deletion when its object (that shard of it, that incarnation of
// it) does not exist; placement then overwrites it if the shard exists in
// a new incarnation.
func (m *Machine) adopt(a StoredAssignment) {
	s := &shard{stored: a.Assignment.Clone(), revision: a.Revision, generation: a.Assignment.Generation}
	m.shards[a.Shard] = s
	spec, ok := m.objects[a.Shard.Object]
	if !ok || a.Shard.Shard >= spec.Shards || a.Assignment.Incarnation != spec.Incarnation {
		m.dirty[a.Shard] = struct{}{}
		return
	}
	s.wanted, s.want = true, a.Assignment.Clone()
	m.load.add(s.want)
}
