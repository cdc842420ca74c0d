package replica

import (
	"context"
	"math"
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
		if _, err := h.follower.Fence(gen, 0); err != nil { // fenced with its primary, unless it was held since
			n.logger(h).Warn("replica part could not be fenced to lead with its shard", "log", h.ref.String(), "generation", gen, "err", err)
			return
		}
		n.adoptTail(ctx, h, gen, o.Followers)
		if _, err := n.leadOne(ctx, h, primary, gen, o); err != nil && ctx.Err() == nil {
			n.logger(h).Warn("replica part could not lead with its shard", "log", h.ref.String(), "generation", gen, "err", err)
		}
	}()
}

// adoptTail takes the longest of the followers' logs of h, when one is
// longer than h's own: it returns once that adoption ended (or ctx did).
func (n *Node) adoptTail(ctx context.Context, h *held, gen uint64, followers []string) {
	if len(followers) == 0 {
		return
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
	for range followers {
		a := <-answers
		if a.err == nil && (a.gen > best.gen || a.gen == best.gen && a.end > best.end) {
			best = a
		}
	}
	if best.peer == "" {
		return
	}
	done := h.follower.startAdopt(best.peer, gen, best.end)
	if done == nil {
		return
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
}
