package engine

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

// Alone is the Ownership of a broker that runs by itself.
type Alone struct{}

// Leader is always local.
func (Alone) Leader(StreamID, int) (bool, string) { return true, "" }
