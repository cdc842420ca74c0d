package broker

import (
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/control"
)

// awaitPlacement waits, within PlaceWait, until the control plane has
// decided about every object in the catalog: each shard placed for the
// object's incarnation, or the object reported unplaced (too few
// brokers). A broker that migrated its catalogs waits for this before its
// first reconcile, so that it opens its migrated shards before it says it
// is ready. Past the wait it goes on (logged): the shards open when the
// placement comes.
func (n *node) awaitPlacement() {
	deadline := time.NewTimer(n.cfg.PlaceWait)
	defer deadline.Stop()
	for {
		changed := n.view.Changed()
		if decided(n.view.Status()) {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			n.logger.Warn("the control plane has not placed the migrated streams and caches yet; they open once it has",
				"waited", n.cfg.PlaceWait)
			return
		}
	}
}

// decided reports whether every object in st's catalog has every shard
// placed for its incarnation, or an unplaced report for it.
func decided(st control.Status) bool {
	placed := map[cluster.ObjectID]int{}
	incarnation := map[cluster.ObjectID]int64{}
	for _, e := range st.Objects {
		incarnation[e.Object] = e.Incarnation
	}
	for _, s := range st.Shards {
		if s.Assignment.Incarnation == incarnation[s.Shard.Object] {
			placed[s.Shard.Object]++
		}
	}
	for _, u := range st.Unplaced {
		if u.Incarnation == incarnation[u.Object] {
			placed[u.Object] = -1
		}
	}
	for _, e := range st.Objects {
		if p := placed[e.Object]; p >= 0 && p < e.Spec().Shards {
			return false
		}
	}
	return true
}
