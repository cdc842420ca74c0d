package engine

import "github.com/felixbroker/felix/engine/shardlog"

// Ownership answers, for every operation only a shard's leader may serve
// (publish, cache write, group poll, producer sequence check), whether this
// broker leads the shard. A single broker leads everything; the cluster
// layer supplies one backed by its leases, and a long poll asks again
// while it waits.
type Ownership interface {
	// Leader reports whether this broker leads the shard, and otherwise
	// the leader's address for a redirect (empty when none is known).
	Leader(id StreamID, shard int) (local bool, leader string)
}

// Placement answers which shards this broker holds a replica of: the
// shards whose logs it opens. A shard it does not hold has no log here;
// every operation on it is another broker's (a publish is forwarded, a
// read redirected). A cache's shards are asked under cache.ID.OwnershipID.
// Holds may change; Engine.Reconcile (and cache.Store.Reconcile) bring the
// open shards in line with it.
type Placement interface {
	Holds(id StreamID, shard int) bool
}

// Forwarder sends a shard's part of a publish to the broker that leads the
// shard, for a shard this broker does not lead. The cluster's routing
// supplies it (netio, over the peer transport); without one, such a part is
// refused with *NotLeaderError.
type Forwarder interface {
	// Forward copies recs (which alias the caller's buffer) before it
	// returns, and tells w once the leader has answered: Committed with the
	// offsets the records got there, or with the leader's refusal. It
	// returns an error, and tells w nothing, when nothing was sent (no
	// leader known: a *NotLeaderError; the peer unreachable: an error
	// saying so). cred is the client's credential, which travels with the
	// records so the leader verifies it again; it is valid only until
	// Forward returns. Forward never blocks: it runs on an event loop.
	Forward(id StreamID, shard int, recs []Record, cred []byte, w shardlog.Waiter) error
}

// Alone is the Ownership and Placement of a broker that runs by itself.
type Alone struct{}

// Leader is always local.
func (Alone) Leader(StreamID, int) (bool, string) { return true, "" }

// Holds is always true.
func (Alone) Holds(StreamID, int) bool { return true }
