package control

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/felixbroker/felix/cluster/store"
)

// OnPromotion is told of a promotion's first write once it is applied
// (the shard, the new generation, when it was sent: a lease after the
// last grant), and of nothing else the driver writes: neither the
// placement's assignment nor the write naming the new leader.
func TestAPromotionsStartIsReportedOnceApplied(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		var mu sync.Mutex
		var got []PromotionReport
		onPromotion := func(p PromotionReport) {
			mu.Lock()
			got = append(got, p)
			mu.Unlock()
		}
		w := newFailoverWorld(t, s, s, nil, 3, func(c *ControllerConfig) { c.OnPromotion = onPromotion })
		g := w.placed.Assignment.Generation
		fs := w.followers()
		fs[0].answerFences(w.shard, cleanAt(5, g))
		fs[1].answerFences(w.shard, cleanAt(7, g))
		var last time.Time
		for range 4 {
			w.leader().mustGrant(cpID, leadingReport(w.shard, g, 4))
			last = time.Now()
			for _, f := range fs {
				f.mustGrant(cpID, followingReport(w.shard, g, 4))
			}
			time.Sleep(testShardLease / 4)
		}
		mu.Lock()
		if len(got) != 0 {
			t.Fatalf("reported %+v while the leader heartbeats", got)
		}
		mu.Unlock()
		// Fake time: the leader falls silent, and a lease and a quarter after
		// its last grant it has been replaced (the new one not yet).
		time.Sleep(time.Until(last.Add(testShardLease + testShardLease/4)))
		synctest.Wait()
		if h := w.history(w.placed.Revision); len(h) != 2 {
			t.Fatalf("the shard's writes %+v; want the promotion's 2", h)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(got) != 1 {
			t.Fatalf("reported %+v; want the promotion's start alone", got)
		}
		if p := got[0]; p.Shard != w.shard || p.Generation != g+1 || p.Sent.Before(last.Add(testShardLease)) {
			t.Fatalf("reported %+v; want %v at generation %d, sent a lease (%v) or more after the last grant at %v",
				p, w.shard, g+1, testShardLease, last)
		}
	})
}
