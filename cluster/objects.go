package cluster

import "fmt"

// create records a new object and places its shards. The same spec again
// is a repeated delivery; a new incarnation replaces the old one (as if it
// had been deleted first); another spec for the same incarnation is
// refused.
func (m *Machine) create(spec ObjectSpec) error {
	if old, ok := m.objects[spec.ID]; ok {
		switch {
		case old == spec:
			return nil
		case old.Incarnation != spec.Incarnation:
			m.remove(old.ID)
			return m.create(spec)
		}
		return fmt.Errorf("%w: %v exists with %s at replication factor %d, not %s at %d", ErrInvalidEvent, spec.ID,
			plural(old.Shards, "shard"), old.ReplicationFactor, plural(spec.Shards, "shard"), spec.ReplicationFactor)
	}
	m.objects[spec.ID] = spec
	m.place(spec.ID)
	return nil
}

// remove forgets an object; its shards' assignments are deleted.
func (m *Machine) remove(id ObjectID) {
	spec, ok := m.objects[id]
	if !ok {
		return
	}
	delete(m.objects, id)
	delete(m.unplaced, id)
	for i := range spec.Shards {
		m.unwant(ShardID{Object: id, Shard: i})
	}
}

// place decides every shard of the object that has no assignment yet, or,
// when its replication factor needs more brokers than are live, none of
// them, and reports why.
func (m *Machine) place(id ObjectID) {
	spec := m.objects[id]
	missing := m.unassigned(spec)
	if len(missing) == 0 {
		delete(m.unplaced, id)
		return
	}
	live := m.liveBrokers()
	if spec.ReplicationFactor > len(live) {
		m.report(Unplaced{Object: id, Needed: spec.ReplicationFactor, Live: len(live)})
		return
	}
	delete(m.unplaced, id)
	for _, sid := range missing {
		m.decide(sid, spec.Incarnation, choose(live, spec.ReplicationFactor, &m.load))
	}
}

// unassigned lists the object's shards with no decided assignment.
func (m *Machine) unassigned(spec ObjectSpec) []ShardID {
	var out []ShardID
	for i := range spec.Shards {
		id := ShardID{Object: spec.ID, Shard: i}
		if s := m.shards[id]; s == nil || !s.wanted {
			out = append(out, id)
		}
	}
	return out
}

// report emits an Unplaced, unless the same was reported last.
func (m *Machine) report(u Unplaced) {
	if prev, ok := m.unplaced[u.Object]; ok && prev == u {
		return
	}
	m.unplaced[u.Object] = u
	m.actions = append(m.actions, u)
}
