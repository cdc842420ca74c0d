package cluster

import "slices"

// choose picks a replica set of rf distinct brokers from live (sorted by
// id, at least rf of them), leader first:
//
//   - the leader is the broker leading the fewest shards, then holding the
//     fewest replicas;
//   - each follower comes from a rack the set does not use yet while one
//     remains (so the set spans min(rf, racks) racks), then holds the
//     fewest replicas, then leads the fewest shards.
//
// Ties go to the lowest broker id (live is sorted), so the same state
// always gives the same set.
func choose(live []Broker, rf int, l *load) []Replica {
	used := make([]bool, len(live))
	racks := make([]string, 0, rf)
	out := make([]Replica, 0, rf)
	for len(out) < rf {
		i := bestCandidate(live, used, func(b Broker) [3]int {
			return rank(b, len(out) == 0, racks, l)
		})
		used[i] = true
		racks = append(racks, live[i].Rack)
		out = append(out, live[i].Replica())
	}
	return out
}

// rank orders candidates: lower is better, compared field by field.
func rank(b Broker, leader bool, racks []string, l *load) [3]int {
	r := b.Replica()
	if leader {
		return [3]int{l.leaders[r], l.replicas[r], 0}
	}
	rackTaken := 0
	if slices.Contains(racks, b.Rack) {
		rackTaken = 1
	}
	return [3]int{rackTaken, l.replicas[r], l.leaders[r]}
}

// bestCandidate is the index of the unused broker of lowest rank; the
// first one wins a tie.
func bestCandidate(live []Broker, used []bool, rankOf func(Broker) [3]int) int {
	best, bestRank := -1, [3]int{}
	for i, b := range live {
		if used[i] {
			continue
		}
		if r := rankOf(b); best < 0 || slices.Compare(r[:], bestRank[:]) < 0 {
			best, bestRank = i, r
		}
	}
	if best < 0 {
		panic("felix/cluster: bug: choose was asked for more replicas than live brokers")
	}
	return best
}
