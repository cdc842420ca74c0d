package cluster_test

import (
	"maps"
	"slices"

	"github.com/felixbroker/felix/cluster"
)

// fakeStore is the little of the control plane's store a placement test
// needs: registered brokers, objects, and assignments changed only by
// compare-and-swap on their revision, one revision counter for all.
type fakeStore struct {
	revision    int64
	brokers     map[string]cluster.Broker
	objects     map[cluster.ObjectID]cluster.ObjectSpec
	assignments map[cluster.ShardID]cluster.StoredAssignment
}

func newFakeStore() *fakeStore {
	return &fakeStore{
		brokers:     map[string]cluster.Broker{},
		objects:     map[cluster.ObjectID]cluster.ObjectSpec{},
		assignments: map[cluster.ShardID]cluster.StoredAssignment{},
	}
}

// apply carries out a Write or Delete if its compare holds, returning the
// key's new revision (0 after a delete) and whether it was applied.
func (s *fakeStore) apply(a cluster.Action) (int64, bool) {
	switch a := a.(type) {
	case cluster.Write:
		if s.assignments[a.Shard].Revision != a.ExpectedRevision {
			return 0, false
		}
		s.revision++
		s.assignments[a.Shard] = cluster.StoredAssignment{Shard: a.Shard, Assignment: a.Assignment.Clone(), Revision: s.revision}
		return s.revision, true
	case cluster.Delete:
		if s.assignments[a.Shard].Revision != a.ExpectedRevision {
			return 0, false
		}
		s.revision++
		delete(s.assignments, a.Shard)
		return 0, true
	}
	panic("fakeStore: not a write")
}

// overwrite is another writer storing the same assignment again: the key's
// revision moves, so a compare against the old one fails.
func (s *fakeStore) overwrite(id cluster.ShardID) bool {
	a, ok := s.assignments[id]
	if ok {
		s.revision++
		a.Revision = s.revision
		s.assignments[id] = a
	}
	return ok
}

// put is another control plane writing an assignment.
func (s *fakeStore) put(id cluster.ShardID, a cluster.Assignment) {
	s.revision++
	s.assignments[id] = cluster.StoredAssignment{Shard: id, Assignment: a, Revision: s.revision}
}

// snapshot is the whole state, in a stable order.
func (s *fakeStore) snapshot() cluster.Snapshot {
	snap := cluster.Snapshot{}
	for _, id := range slices.Sorted(maps.Keys(s.brokers)) {
		snap.Brokers = append(snap.Brokers, s.brokers[id])
	}
	snap.Objects = slices.SortedFunc(maps.Values(s.objects), func(a, b cluster.ObjectSpec) int {
		return compareObjectIDs(a.ID, b.ID)
	})
	for _, a := range slices.SortedFunc(maps.Values(s.assignments), func(a, b cluster.StoredAssignment) int {
		return compareShardIDs(a.Shard, b.Shard)
	}) {
		a.Assignment = a.Assignment.Clone()
		snap.Assignments = append(snap.Assignments, a)
	}
	return snap
}
