package replica

import (
	"context"
	"math"
	"time"
)

// A secondary part's leadership starts after its adoption (follower_adopt.go):
// the new leader asks the part's followers where their logs end and takes
// the longest tail first. It runs on a goroutine of its own, so a follower
// that does not answer delays that part only, never the caller of Lead
// (the broker's reconcile loop) nor the shard's primary.

// partEnd is a follower's answer: where its log of the part ends.
type partEnd struct {
	peer string
	gen  uint32
	end  int64
	err  error
}

// leadPart leads h, a secondary part of primary, at gen once it adopted
// its followers' longest tail.
func (n *Node) leadPart(h, primary *held, gen uint64, o LeadOptions) {
	ctx, cancel := context.WithCancel(n.ctx)
	n.mu.Lock()
	if h.stopAdopt != nil {
		h.stopAdopt()
	}
	h.stopAdopt = cancel
	n.mu.Unlock()
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		defer cancel()
		if !n.waitPartLead(ctx) {
			return
		}
		if _, err := h.follower.Fence(gen, 0); err != nil { // fenced with its primary, unless it was held since
			n.logger(h).Warn("replica part could not be fenced to lead with its shard", "log", h.ref.String(), "generation", gen, "err", err)
			return
		}
		for !n.adoptTail(ctx, h, gen, o.Followers, o.Joined) && o.Consistency == ConsistencyQuorum {
			// A Quorum part's acknowledged records are on a majority, not
			// necessarily on this replica: it leads only once it heard
			// enough replicas that every one of them is among what it took.
			select { // its followers may not hold the part yet (they hold it at their own reconcile)
			case <-ctx.Done():
				return
			case <-time.After(tick):
			}
		}
		if !n.waitPartLead(ctx) {
			return
		}
		if _, err := n.leadOne(ctx, h, primary, gen, o); err != nil && ctx.Err() == nil {
			n.logger(h).Warn("replica part could not lead with its shard", "log", h.ref.String(), "generation", gen, "err", err)
		}
	}()
}

// waitPartLead waits PartLeadDelay (NodeConfig), and reports whether ctx
// still holds.
func (n *Node) waitPartLead(ctx context.Context) bool {
	if n.cfg.PartLeadDelay <= 0 {
		return true
	}
	t := time.NewTimer(n.cfg.PartLeadDelay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// adoptTail takes the longest of the followers' logs of h, when one is
// longer than h's own: it returns once that adoption ended (or ctx did).
// It reports whether what h holds now covers every record a majority of
// the replicas holds: R-M+1 replicas (h among them) answered and h took
// the longest of their tails (any R-M+1 replicas meet every majority). A
// follower that joined the set at generation J (joined) holds nothing
// acknowledged before J until its log of the part reaches J: its answer
// is adopted from when it is the longest, but counted only from then.
func (n *Node) adoptTail(ctx context.Context, h *held, gen uint64, followers []string, joined map[string]uint64) bool {
	if len(followers) == 0 {
		return true
	}
	need := len(followers) + 1 - Majority(len(followers)+1) // answers besides h's own
	if uint64(h.log.LastGeneration()) < joined[n.cfg.Broker.Broker] {
		need++ // h's own log of the part does not count yet
	}
	ask, cancel := context.WithTimeout(ctx, n.cfg.Lease/4)
	defer cancel()
	answers := make(chan partEnd, len(followers))
	for _, peer := range followers {
		go func() {
			held, end, _, _, err := h.follower.askGenerationEnd(ask, peer, 0, math.MaxUint32, nil, nil)
			answers <- partEnd{peer: peer, gen: held, end: end, err: err}
		}()
	}
	best := partEnd{gen: h.log.LastGeneration(), end: nextOffset(h.log)}
	answered := 0
	for range followers {
		a := <-answers
		if a.err != nil {
			continue
		}
		if uint64(a.gen) >= joined[a.peer] {
			answered++
		}
		if a.gen > best.gen || a.gen == best.gen && a.end > best.end {
			best = a
		}
	}
	if best.peer == "" {
		return answered >= need
	}
	done := h.follower.startAdopt(best.peer, gen, best.end)
	if done == nil {
		return false
	}
	select {
	case <-done:
	case <-ctx.Done():
		return false
	}
	return answered >= need && h.log.LastGeneration() == best.gen && nextOffset(h.log) >= best.end
}
