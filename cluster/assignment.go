package cluster

import (
	"fmt"
	"slices"
)

// Assignment is where a shard lives: what the control plane writes to the
// store for it, and what brokers watch to open, serve or close the shard.
type Assignment struct {
	// Replicas in preference order; at placement the first is the leader.
	Replicas []Replica
	// Leader is the replica that serves the shard; the zero Replica while
	// none does (promotion, the next step, writes a generation before it
	// names a leader).
	Leader Replica
	// Generation starts at 1 and only rises: a new leader takes the next.
	Generation uint64
	// Incarnation is the ObjectSpec.Incarnation the shard was placed for.
	Incarnation int64
}

// String is "gen=G leader=L replicas=R1,R2 inc=I", as tests and logs
// print it.
func (a Assignment) String() string {
	return fmt.Sprintf("gen=%d leader=%v replicas=%v inc=%d", a.Generation, a.Leader, joinReplicas(a.Replicas), a.Incarnation)
}

func joinReplicas(rs []Replica) string {
	s := ""
	for i, r := range rs {
		if i > 0 {
			s += ","
		}
		s += r.String()
	}
	return s
}

// Equal reports whether two assignments say the same thing.
func (a Assignment) Equal(b Assignment) bool {
	return a.Generation == b.Generation && a.Leader == b.Leader && a.Incarnation == b.Incarnation &&
		slices.Equal(a.Replicas, b.Replicas)
}

// Clone copies the replica slice, so the copy shares nothing.
func (a Assignment) Clone() Assignment {
	a.Replicas = slices.Clone(a.Replicas)
	return a
}

// Holds reports whether r is one of the shard's replicas.
func (a Assignment) Holds(r Replica) bool { return slices.Contains(a.Replicas, r) }

// StoredAssignment is an assignment as read from the store, with the
// revision a compare-and-swap of it must name.
type StoredAssignment struct {
	Shard      ShardID
	Assignment Assignment
	Revision   int64
}
