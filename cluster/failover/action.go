package failover

import (
	"time"

	"github.com/felixbroker/felix/cluster"
)

// Action is what the machine asks the driver to do, drained with
// Machine.Ready. The set is closed: the types below are all there are.
type Action interface{ isAction() }

// Write asks the driver to store Assignment under the shard's key by
// compare-and-swap: only if the key's modification revision is still
// ExpectedRevision and the election key still has create revision Epoch.
// Step WriteDone or WriteFailed with Seq when it is answered.
type Write struct {
	Seq              uint64
	Epoch            int64
	Shard            cluster.ShardID
	Assignment       cluster.Assignment
	ExpectedRevision int64
}

// Fence asks the driver to send a fence to one replica: it must persist
// Generation (and Epoch) before it answers, refuse appends below it, and
// answer with its real log end (FenceReplied).
type Fence struct {
	Shard      cluster.ShardID
	To         cluster.Replica
	Generation uint64
	Epoch      int64
}

// Grant answers one heartbeat (HeartbeatSeq): a lease of Lease for each
// shard listed, at that generation. The broker counts it from when it
// sent the heartbeat and stops acknowledging at 3/4 of it. Shards may be
// empty: every heartbeat gets exactly one Grant.
type Grant struct {
	To           cluster.Replica
	HeartbeatSeq uint64
	Epoch        int64
	Lease        time.Duration
	Shards       []GrantedShard
}

// GrantedShard is one shard a Grant leases, at one generation.
type GrantedShard struct {
	Shard      cluster.ShardID
	Generation uint64
}

func (Write) isAction() {}
func (Fence) isAction() {}
func (Grant) isAction() {}
