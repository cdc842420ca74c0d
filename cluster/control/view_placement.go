package control

import (
	"fmt"

	"github.com/felixbroker/felix/engine"
)

var _ engine.Placement = (*View)(nil)

// Holds implements engine.Placement: whether this broker, on its current
// disk (ViewConfig.Local), is one of the shard's replicas, placed for the
// incarnation of the object the catalog holds now. A broker that comes
// back on another disk holds none of its old shards (their data is not
// there). A cache's shards are asked for under cache.ID.OwnershipID. Like
// Leader it takes no lock and allocates nothing, so the engine may ask it
// on any path.
func (v *View) Holds(id engine.StreamID, shard int) bool {
	return v.owners.Load().of(ownershipShard(id, shard)).held
}

// LeaderBroker is the id of the broker that leads the shard, when another
// broker does and it is registered on the leader's disk: where the
// cluster's routing sends what only the leader serves (ok is false when
// this broker leads, no replica leads, or the leader is not registered).
// A cache's shards are asked for under cache.ID.OwnershipID. It takes no
// lock and allocates nothing.
func (v *View) LeaderBroker(id engine.StreamID, shard int) (broker string, ok bool) {
	o := v.owners.Load().of(ownershipShard(id, shard))
	return o.broker, o.broker != ""
}

// PeerAddr is the peer address a broker registered (what the peer
// transport dials). A broker not registered, or registered without a
// peer address, is an error matching ErrNotRegistered: the caller retries
// once the view has seen it register again.
func (v *View) PeerAddr(broker string) (string, error) {
	v.mu.RLock()
	b, ok := v.state.brokers[broker]
	v.mu.RUnlock()
	switch {
	case !ok:
		return "", fmt.Errorf("%w: broker %q", ErrNotRegistered, broker)
	case b.PeerAddr == "":
		return "", fmt.Errorf("%w: broker %q registered no peer address", ErrNotRegistered, broker)
	}
	return b.PeerAddr, nil
}

// ShardReplicas is a shard's generation and its replicas' broker ids,
// leader first, as the store assigns them (ok false when the shard has no
// assignment): what a describe reports. A cache's shards are asked for
// under cache.ID.OwnershipID. It takes the View's lock: not for the data
// path.
func (v *View) ShardReplicas(id engine.StreamID, shard int) (generation uint64, replicas []string, ok bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	a, found := v.state.shards[ownershipShard(id, shard)]
	if !found {
		return 0, nil, false
	}
	for _, r := range a.Assignment.Replicas {
		replicas = append(replicas, r.Broker)
	}
	return a.Assignment.Generation, replicas, true
}
