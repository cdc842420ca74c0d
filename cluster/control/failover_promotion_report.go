package control

import (
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/failover"
)

// PromotionReport is the start of one promotion, for a test's journal of
// them (FailoverConfig.OnPromotion, ControllerConfig.OnPromotion): the
// control plane's first write of it, the shard's new Generation with no
// leader named, was applied; Sent is when that write was sent, after the
// old leader's lease had run out as this control plane counts it. No
// leader of a lower generation may acknowledge at or after Sent (the
// history checker's ack-after-promotion); nothing in the broker's own
// work reads these.
type PromotionReport struct {
	Shard      cluster.ShardID
	Generation uint64
	Sent       time.Time
}

// reportPromotion tells OnPromotion of w, applied, if it was a
// promotion's first write (no leader named).
func (d *FailoverDriver) reportPromotion(w failover.Write, sent time.Time) {
	if d.onPromotion == nil || w.Assignment.Leader != (cluster.Replica{}) {
		return
	}
	d.onPromotion(PromotionReport{Shard: w.Shard, Generation: w.Assignment.Generation, Sent: sent})
}
