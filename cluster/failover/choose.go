package failover

import "github.com/felixbroker/felix/cluster"

// ballot is what a promotion weighs: the fence answers against the
// replica set, and what the new leader must hold.
type ballot struct {
	replicas     []cluster.Replica // in preference order: ties go to the earliest
	factor       int               // R
	oldLeader    cluster.Replica   // the zero Replica: unknown
	leaderStream bool
	target       int64 // for a Leader stream, the end the chosen must reach
	answers      map[cluster.Replica]FenceReplied
}

// choose is steps 3 and 4: once the answers are enough that every
// acknowledged record is among them, the replica with the highest
// (LastGen, end), if it holds what a Leader stream acknowledged.
func (b ballot) choose() (cluster.Replica, bool) {
	if !b.enough() {
		return cluster.Replica{}, false
	}
	var best FenceReplied
	found := false
	for _, r := range b.replicas {
		if a, ok := b.answers[r]; ok && !a.NewDisk && (!found || longer(a, best)) {
			best, found = a, true
		}
	}
	if !found || (b.leaderStream && end(best) < b.target) {
		return cluster.Replica{}, false
	}
	return best.From, true
}

// enough reports whether every record acknowledged at Quorum must be in
// one of the answers. A Quorum record is durable on M = R/2+1 replicas, so
// any R-M+1 of them hold it: the answers count whoever sent them, the old
// leader included. The old leader's answer alone is enough when it holds
// everything it acknowledged: it stopped cleanly, or the stream is a
// Leader stream (acknowledged only once durable on the leader). An
// answer from a new disk never counts.
func (b ballot) enough() bool {
	counted := 0
	for _, r := range b.replicas {
		a, ok := b.answers[r]
		if !ok || a.NewDisk {
			continue
		}
		if r == b.oldLeader && (a.Clean || b.leaderStream) {
			return true
		}
		counted++
	}
	return counted >= b.factor-(b.factor/2+1)+1
}

// end is what the replica surely holds: its log end after a clean stop,
// its durable end after an unclean one.
func end(a FenceReplied) int64 {
	if a.Clean {
		return a.LogEnd
	}
	return a.Durable
}

// longer orders answers by (LastGen, end).
func longer(a, b FenceReplied) bool {
	if a.LastGen != b.LastGen {
		return a.LastGen > b.LastGen
	}
	return end(a) > end(b)
}
