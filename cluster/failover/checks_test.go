package failover_test

import (
	"slices"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/failover"
)

// checks holds what the world's invariants need to remember, and checks
// each action against it.
type checks struct {
	written    map[cluster.ShardID]uint64        // highest generation this machine wrote
	leaderless map[cluster.ShardID]uint64        // the generation of its last leaderless write
	leasedTo   map[grantKey]cluster.Replica      // who was granted each shard at each generation
	leaseEnd   map[cluster.ShardID]time.Duration // the latest At+L granted, by any machine
	answers    map[answerKey]failover.FenceReplied
	oldLeader  map[cluster.ShardID]cluster.Replica // the leader before the last leaderless write
	// early: the last leaderless write came before the lease bound (a
	// replacement), and until when that bound ran.
	early    map[cluster.ShardID]time.Duration
	named    int // promotions completed
	replaced int // of them, replacing a gone replica
}

type grantKey struct {
	shard cluster.ShardID
	gen   uint64
}

type answerKey struct {
	shard cluster.ShardID
	gen   uint64
	epoch int64
	from  cluster.Replica
}

func newChecks() checks {
	return checks{leasedTo: map[grantKey]cluster.Replica{}, leaseEnd: map[cluster.ShardID]time.Duration{},
		answers: map[answerKey]failover.FenceReplied{}, oldLeader: map[cluster.ShardID]cluster.Replica{},
		early: map[cluster.ShardID]time.Duration{}}
}

// newMachine forgets what the last machine wrote: its writes not applied
// are lost, and the new one starts from the store.
func (c *checks) newMachine(w *world) {
	c.written, c.leaderless = map[cluster.ShardID]uint64{}, map[cluster.ShardID]uint64{}
	for id, sa := range w.store {
		c.written[id] = sa.Assignment.Generation
	}
}

func (c *checks) grant(w *world, g failover.Grant) {
	if g.Epoch != w.epoch || g.Lease != lease {
		w.t.Fatalf("grant %+v: epoch or lease wrong", g)
	}
	for _, gs := range g.Shards {
		k := grantKey{gs.Shard, gs.Generation}
		if to, ok := c.leasedTo[k]; ok && to != g.To {
			w.t.Fatalf("%v at generation %d granted to %v and to %v", gs.Shard, gs.Generation, to, g.To)
		}
		c.leasedTo[k] = g.To
		if a := w.store[gs.Shard].Assignment; a.Leader != g.To || a.Generation != gs.Generation {
			w.t.Fatalf("%v granted to %v at %d; the store holds %v", gs.Shard, g.To, gs.Generation, a)
		}
		c.leaseEnd[gs.Shard] = max(c.leaseEnd[gs.Shard], w.now+lease)
	}
}

func (c *checks) write(w *world, wr failover.Write) {
	a := wr.Assignment
	if wr.Epoch != w.epoch {
		w.t.Fatalf("write %+v: not at epoch %d", wr, w.epoch)
	}
	if a.Leader != none && !a.Holds(a.Leader) {
		w.t.Fatalf("write %+v: the leader is not a replica", wr)
	}
	stored := w.store[wr.Shard].Assignment
	if !sameSet(a.Replicas, stored.Replicas, brokerOf) || a.Leader != none && !sameSet(a.Replicas, stored.Replicas, cluster.Replica.String) {
		w.t.Fatalf("write %+v: replicas differ from the store's %v", wr, stored)
	}
	if a.Leader == none {
		c.checkLeaderless(w, wr)
		return
	}
	if a.Generation != c.leaderless[wr.Shard] || a.Replicas[0] != a.Leader {
		w.t.Fatalf("write %+v: want the leader first at generation %d", wr, c.leaderless[wr.Shard])
	}
	c.checkChoice(w, wr)
	c.checkEarly(w, wr)
	c.named++
	if len(a.Joins) != 0 && slices.ContainsFunc(a.Joins, func(j cluster.Join) bool { return j.Generation == a.Generation }) {
		c.replaced++
	}
}

func (c *checks) checkLeaderless(w *world, wr failover.Write) {
	gen := wr.Assignment.Generation
	if gen <= c.written[wr.Shard] || gen <= w.store[wr.Shard].Assignment.Generation {
		w.t.Fatalf("write %+v: generation not above %d written and %v stored", wr, c.written[wr.Shard],
			w.store[wr.Shard].Assignment)
	}
	c.checkReplacement(w, wr)
	delete(c.early, wr.Shard)
	if bound := max(w.started+lease, c.leaseEnd[wr.Shard]); w.now < bound {
		if slices.Equal(wr.Assignment.Replicas, w.store[wr.Shard].Assignment.Replicas) {
			w.t.Fatalf("write %+v at %v: before the lease bound %v, replacing nobody", wr, w.now, bound)
		}
		c.early[wr.Shard] = bound
	}
	c.written[wr.Shard], c.leaderless[wr.Shard] = gen, gen
	if old := w.store[wr.Shard].Assignment.Leader; old != (cluster.Replica{}) {
		c.oldLeader[wr.Shard] = old
	}
}

// checkChoice: the leader named answered the fence at its generation and
// this epoch, not from a new disk, and no such answer is longer, but for
// a Quorum stream's old leader when it was passed over (its followers
// could not reach it: the others' answers were enough without it, so
// what it holds beyond them was never acknowledged at Quorum).
func (c *checks) checkChoice(w *world, wr failover.Write) {
	gen, leader := wr.Assignment.Generation, wr.Assignment.Leader
	chosen, ok := c.answers[answerKey{wr.Shard, gen, w.epoch, leader}]
	if !ok || chosen.NewDisk {
		w.t.Fatalf("write %+v: %v gave no answer that counts", wr, leader)
	}
	for _, r := range wr.Assignment.Replicas {
		a, ok := c.answers[answerKey{wr.Shard, gen, w.epoch, r}]
		if r == c.oldLeader[wr.Shard] && r != leader && w.consistency(wr.Shard) == failover.Quorum {
			continue
		}
		if ok && !a.NewDisk && orderOf(a) > orderOf(chosen) {
			w.t.Fatalf("write %+v: %+v is longer than the chosen %+v (old leader %v, %v)", wr, a, chosen, c.oldLeader[wr.Shard], w.consistency(wr.Shard))
		}
	}
}

// checkReplacement: a leaderless write changes a replica only to its
// broker's current disk, where that broker is back on a new disk, joining
// at the write's generation; other joins are kept as stored.
func (c *checks) checkReplacement(w *world, wr failover.Write) {
	a, stored := wr.Assignment, w.store[wr.Shard].Assignment
	for i, r := range a.Replicas {
		old := stored.Replicas[i]
		switch {
		case r == old && a.JoinedAt(r) != stored.JoinedAt(r):
			w.t.Fatalf("write %+v: %v's join changed from the store's %v", wr, r, stored)
		case r != old && (r.Broker != old.Broker || !slices.Contains(w.brokers, r) || a.JoinedAt(r) != a.Generation):
			w.t.Fatalf("write %+v: %v replaced by %v, not its broker's current disk joining at %d", wr, old, r, a.Generation)
		}
	}
}

// checkEarly: a promotion begun before the lease bound names a leader
// only once the old leader answered its fence, or the bound has passed.
func (c *checks) checkEarly(w *world, wr failover.Write) {
	bound, ok := c.early[wr.Shard]
	if !ok || w.now >= bound {
		return
	}
	if _, answered := c.answers[answerKey{wr.Shard, wr.Assignment.Generation, w.epoch, c.oldLeader[wr.Shard]}]; !answered {
		w.t.Fatalf("write %+v at %v: named before the old leader %v answered or its lease ran out at %v", wr, w.now,
			c.oldLeader[wr.Shard], bound)
	}
}

func (c *checks) answer(_ *world, ev failover.FenceReplied) {
	c.answers[answerKey{ev.Shard, ev.Generation, ev.Epoch, ev.From}] = ev
}

// orderOf is (LastGen, end) as one comparable number (ends stay below
// 1<<32 in the world).
func orderOf(a failover.FenceReplied) int64 {
	end := a.Durable
	if a.Clean {
		end = a.LogEnd
	}
	return int64(a.LastGen)<<32 | end
}

// sameSet reports whether a and b hold the same keys, in any order: by
// brokerOf (a replacement changes a broker's disk only), or by
// Replica.String (the very replicas).
func sameSet(a, b []cluster.Replica, key func(cluster.Replica) string) bool {
	var x, y []string
	for _, r := range a {
		x = append(x, key(r))
	}
	for _, r := range b {
		y = append(y, key(r))
	}
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

func brokerOf(r cluster.Replica) string { return r.Broker }

// consistency is the shard's stream's level in this world.
func (w *world) consistency(id cluster.ShardID) failover.Consistency {
	for _, s := range w.specs {
		if s.id == id {
			return s.c
		}
	}
	return failover.Leader
}
