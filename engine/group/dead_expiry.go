package group

import "time"

// deadScanEvery bounds how often a group walks its dead letters for the
// expired ones: a walk costs one look at each, so with many dead letters
// it runs at most this often, and a dead letter outlives its age by at
// most this much.
const deadScanEvery = time.Second

// expireDead drops the dead letters older than Options.DeadLetterMaxAge,
// at most once per deadScanEvery. The log records that held them are
// dropped by the next compaction (liveDeadRecord no longer names them),
// and a rebuild before that skips them (replayDead). Called with g.mu held
// by every operation on the group.
func (g *group) expireDead() {
	maxAge := g.sg.m.opts.DeadLetterMaxAge
	if maxAge <= 0 || len(g.dead) == 0 {
		return
	}
	now := g.sg.m.opts.Clock.Now().UnixNano()
	if now-g.deadScanned < int64(deadScanEvery) {
		return
	}
	g.deadScanned = now
	for o, d := range g.dead {
		if deadExpired(d.At.UnixNano(), now, maxAge) {
			delete(g.dead, o)
			g.sg.m.counters.deadExpired.Add(1)
		}
	}
}

// deadExpired says whether a dead letter given up on at (unix ns) is past
// maxAge at now; never when maxAge is 0.
func deadExpired(at, now int64, maxAge time.Duration) bool {
	return maxAge > 0 && now-at >= int64(maxAge)
}
