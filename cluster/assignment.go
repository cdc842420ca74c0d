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
	// Joins are the replicas that took a place in the set after the shard
	// was placed (a broker back on a new disk replaces its old replica),
	// each with the generation it joined at. A replica that joined at J
	// holds nothing written before J's start record until its log reaches
	// J: only then does its answer to a fence count towards a promotion.
	// A replica absent from Joins has been in the set since placement.
	Joins []Join
}

// Join is a replica that joined a shard's set at Generation.
type Join struct {
	Replica    Replica
	Generation uint64
}

// JoinedAt is the generation r joined the set at; 0 when it has been
// in it since placement (or is not in it).
func (a Assignment) JoinedAt(r Replica) uint64 {
	for _, j := range a.Joins {
		if j.Replica == r {
			return j.Generation
		}
	}
	return 0
}

// String is "gen=G leader=L replicas=R1,R2 inc=I", as tests and logs
// print it, with " joins=R@J,..." after it when a replica joined later.
func (a Assignment) String() string {
	s := fmt.Sprintf("gen=%d leader=%v replicas=%v inc=%d", a.Generation, a.Leader, joinReplicas(a.Replicas), a.Incarnation)
	for i, j := range a.Joins {
		sep := ","
		if i == 0 {
			sep = " joins="
		}
		s += fmt.Sprintf("%s%v@%d", sep, j.Replica, j.Generation)
	}
	return s
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
		slices.Equal(a.Replicas, b.Replicas) && slices.Equal(a.Joins, b.Joins)
}

// Clone copies the replica and join slices, so the copy shares nothing.
func (a Assignment) Clone() Assignment {
	a.Replicas = slices.Clone(a.Replicas)
	a.Joins = slices.Clone(a.Joins)
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
