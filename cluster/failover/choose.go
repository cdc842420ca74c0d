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
	// avoidOld: the old leader is one its followers cannot reach; it is
	// chosen again only when no other replica may be.
	avoidOld bool
	// acksDurable: acknowledgements follow the fsync (Assigned.AcksDurable);
	// otherwise an unclean answer does not count.
	acksDurable bool
	// gone are the replicas whose broker heartbeats from another disk: they
	// will never answer, and hold nothing anyone can read.
	gone map[cluster.Replica]bool
	// joined is the generation each replica that joined after placement
	// joined at (replace.go); absent: since placement.
	joined map[cluster.Replica]uint64
}

// choose is steps 3 and 4: once the answers are enough that every
// acknowledged record is among them, the replica with the highest
// (LastGen, end), if it holds what a Leader stream acknowledged.
//
// When the old leader is to be avoided, the others' answers are weighed
// alone first: if they are enough without it (R-M+1 of them hold every
// record acknowledged at Quorum), the highest of them leads, so a leader
// its followers cannot reach is not promoted again into the same
// partition. If they are not, a Quorum stream waits for more of them (its
// old leader reaches no majority: it would serve nothing), and a Leader
// stream, which its old leader can serve alone, counts the old leader's
// answer as any other.
func (b ballot) choose() (cluster.Replica, bool) {
	if b.avoidOld && b.oldLeader != (cluster.Replica{}) {
		others := b
		others.answers = make(map[cluster.Replica]FenceReplied, len(b.answers))
		for r, a := range b.answers {
			if r != b.oldLeader {
				others.answers[r] = a
			}
		}
		others.avoidOld = false
		r, ok := others.choose()
		if old, answered := b.answers[b.oldLeader]; ok && answered && b.leaderStream && longer(old, others.answers[r]) {
			// A Leader stream's old leader acknowledged what it holds
			// durably, reported or not: another replica leads only if it
			// holds all of it.
			ok = false
		}
		if ok || (!b.leaderStream && !b.allAnswered()) {
			// A Quorum stream's old leader reaches no majority: leading
			// again it would serve nothing, so the shard waits for the
			// others' answers (or the partition to heal), unless every
			// replica has answered: then nothing more can be learnt.
			return r, ok
		}
	}
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
// answer from a new disk never counts, nor one from a replica that joined
// the set at a generation its log does not reach yet.
//
// When acknowledgements precede the fsync, an answer from a replica that
// stopped uncleanly (its machine booted again: it may have lost what it
// acknowledged) does not count either. Once every replica has answered,
// though, or is gone (its broker is back on another disk), nothing more
// can be learnt: the highest answer holds all that survives anywhere, and
// is enough.
func (b ballot) enough() bool {
	if b.allAnswered() {
		return true
	}
	counted := 0
	for _, r := range b.replicas {
		a, ok := b.answers[r]
		if !ok || a.NewDisk || !b.counts(r, a) {
			continue
		}
		if r == b.oldLeader && (a.Clean || b.leaderStream) {
			return true
		}
		if !a.Clean && !b.acksDurable {
			continue // it may have lost records it acknowledged before their fsync
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

// allAnswered reports whether every replica of the set has answered or
// is gone. Gone replicas stand in for answers only while fewer than a
// majority are gone: a record acknowledged at Quorum is on M replicas, so
// one of the others answering holds it; were M of them gone, none might.
// A joined replica whose answer does not count yet holds none of what was
// acknowledged before it joined: it is counted as gone.
func (b ballot) allAnswered() bool {
	gone := 0
	for _, r := range b.replicas {
		a, ok := b.answers[r]
		switch {
		case ok && !b.counts(r, a):
			gone++
		case !ok && !b.gone[r]:
			return false
		case !ok:
			gone++
		}
	}
	return gone < b.factor/2+1
}
