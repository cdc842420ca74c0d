package broker

import (
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/control"
)

// awaitPlacement waits, within PlaceWait, until this broker's View holds
// every object of ids in its catalog and the control plane has decided
// about each: every shard placed for the object's incarnation, or the
// object reported unplaced (too few brokers). A broker that migrated its
// catalogs waits for this before its first reconcile, so that it opens
// its migrated shards before it says it is ready. Past the wait it goes
// on (logged): the shards open when the placement comes.
func (n *node) awaitPlacement(ids []cluster.ObjectID) {
	deadline := time.NewTimer(n.cfg.PlaceWait)
	defer deadline.Stop()
	for {
		changed := n.view.Changed()
		if decided(n.view.Status(), ids) {
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

// decided reports whether st's catalog holds every object of ids with
// every shard placed for its incarnation, or an unplaced report for it.
func decided(st control.Status, ids []cluster.ObjectID) bool {
	entries := map[cluster.ObjectID]control.Entry{}
	for _, e := range st.Objects {
		entries[e.Object] = e
	}
	placed := map[cluster.ObjectID]int{}
	for _, s := range st.Shards {
		if e, ok := entries[s.Shard.Object]; ok && s.Assignment.Incarnation == e.Incarnation {
			placed[s.Shard.Object]++
		}
	}
	for _, u := range st.Unplaced {
		if e, ok := entries[u.Object]; ok && u.Incarnation == e.Incarnation {
			placed[u.Object] = -1
		}
	}
	for _, id := range ids {
		e, ok := entries[id]
		if !ok {
			return false
		}
		if p := placed[id]; p >= 0 && p < e.Spec().Shards {
			return false
		}
	}
	return true
}
