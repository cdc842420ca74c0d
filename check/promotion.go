package check

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
)

// Promotion is the start of a shard's promotion to a new generation: the
// control plane's first write of it (generation G+1, no leader named
// yet), as the control plane (or the simulator watching it) records it.
// Time is when that write was sent, on the clock of the Acks' Time: one
// clock for every process of a run (CLOCK_MONOTONIC for processes on one
// host), or the comparison means nothing.
type Promotion struct {
	Shard      Shard
	Generation uint64
	Time       int64
}

// checkAcksAfterPromotions: no acknowledgement at generation g is sent at
// or after the start of a promotion of its shard to a generation above g.
// The control plane begins one only once the leader's last lease has run
// out as it counts it (L from a heartbeat's receipt), and the leader stops
// at 3L/4 from that heartbeat's send: an ack at or after it is an old
// leader acknowledging after its replacement began.
func checkAcksAfterPromotions(r *Report, acks []Ack, promos []Promotion) {
	r.Stats.Promotions += len(promos)
	if len(promos) == 0 {
		return
	}
	starts := promotionStarts(promos)
	for _, a := range acks {
		p, ok := starts[a.Shard].earliestAbove(a.Generation)
		if ok && a.Time >= p.Time {
			r.add(AckAfterPromotion, fmt.Sprintf("shard %s: %s acknowledged offset %d at generation %d at %d, %d after the promotion to generation %d began at %d",
				a.Shard, a.Broker, a.Offset, a.Generation, a.Time, a.Time-p.Time, p.Generation, p.Time))
		}
	}
}

// shardPromotions are one shard's promotions in generation order, with
// beside each the earliest to begin of it and those after it.
type shardPromotions struct {
	byGen    []Promotion
	earliest []Promotion // earliest[i]: the earliest of byGen[i:]
}

func promotionStarts(promos []Promotion) map[Shard]*shardPromotions {
	out := map[Shard]*shardPromotions{}
	for _, p := range promos {
		sp := out[p.Shard]
		if sp == nil {
			sp = &shardPromotions{}
			out[p.Shard] = sp
		}
		sp.byGen = append(sp.byGen, p)
	}
	for _, sp := range out {
		slices.SortStableFunc(sp.byGen, func(a, b Promotion) int { return cmp.Compare(a.Generation, b.Generation) })
		sp.earliest = slices.Clone(sp.byGen)
		for i := len(sp.earliest) - 2; i >= 0; i-- {
			if sp.earliest[i+1].Time < sp.earliest[i].Time {
				sp.earliest[i] = sp.earliest[i+1]
			}
		}
	}
	return out
}

// earliestAbove is the promotion to a generation above gen that began
// first; false when there is none (sp nil: the shard was never promoted).
func (sp *shardPromotions) earliestAbove(gen uint64) (Promotion, bool) {
	if sp == nil {
		return Promotion{}, false
	}
	i := sort.Search(len(sp.byGen), func(i int) bool { return sp.byGen[i].Generation > gen })
	if i == len(sp.byGen) {
		return Promotion{}, false
	}
	return sp.earliest[i], true
}
