package failover

import (
	"fmt"
	"time"

	"github.com/felixbroker/felix/cluster"
)

// Event is what the driver steps into the Machine: what the store holds,
// what a broker said, the time, or the outcome of an action. The set is
// closed: the types below are all there are.
type Event interface{ isEvent() }

// Consistency is the acknowledgement level of a shard's stream, which
// decides what a promotion must keep.
type Consistency uint8

const (
	// Leader: a publish is acknowledged once the leader made it durable,
	// so a new leader must reach the old leader's last reported durable
	// end.
	Leader Consistency = iota + 1
	// Quorum: a publish is acknowledged once a majority of the replicas
	// made it durable.
	Quorum
)

func (c Consistency) String() string {
	switch c {
	case Leader:
		return "leader"
	case Quorum:
		return "quorum"
	}
	return fmt.Sprintf("consistency(%d)", c)
}

// Assigned: the shard's assignment as the store holds it (from the watch
// or a read after a resync), with the revision a compare-and-swap of it
// must name. A newer revision replaces what the machine knew; an older
// revision or a lower generation is ignored (the store's only rise).
type Assigned struct {
	Stored            cluster.StoredAssignment
	ReplicationFactor int
	Consistency       Consistency
	// AcksDurable: every replica acknowledges a record only once it has
	// fsynced it (the stream's FsyncMode is OnCommit). Otherwise a replica
	// that stopped uncleanly may have lost records it acknowledged, and
	// its fence answer does not count towards the answers enough to
	// promote.
	AcksDurable bool
}

// Removed: the shard's object was deleted; its assignment is gone.
type Removed struct{ Shard cluster.ShardID }

// Heartbeat: a broker's heartbeat, received at At on the control plane's
// monotonic clock, with one report per shard the broker holds. Each gets
// exactly one Grant back.
type Heartbeat struct {
	Broker  cluster.Replica
	Seq     uint64
	At      time.Duration
	Reports []Report
}

// Report is what a broker says of one shard it holds.
type Report struct {
	Shard      cluster.ShardID
	Generation uint64 // the generation the broker holds the shard at
	Leading    bool
	LogEnd     int64
	LastGen    uint32 // the generation of its last record
	Durable    int64  // its durable end (a leader's own)
	// LeaderHeard, for a follower, is how long ago on the broker's clock it
	// last heard from its leader; below 0: never (at this generation). For
	// a leader, it is how long ago a quorum of its followers last answered
	// it: one they cannot reach (each way) is replaced.
	LeaderHeard time.Duration
}

// Tick: time passed; Now is the control plane's monotonic clock.
type Tick struct{ Now time.Duration }

// FenceReplied: a replica persisted the fence named by Generation and
// Epoch and reports its real log end, after its own recovery.
type FenceReplied struct {
	Shard      cluster.ShardID
	From       cluster.Replica
	Generation uint64
	Epoch      int64
	LogEnd     int64
	LastGen    uint32
	Durable    int64
	// NewDisk: its data directory is new, it never held the shard's data;
	// the answer never counts.
	NewDisk bool
	// Clean: its last stop was clean. When not, only Durable is what it
	// surely holds (what lies past it may be lost).
	Clean bool
}

// WriteDone: the Write numbered Seq was applied; Revision is the key's new
// modification revision.
type WriteDone struct {
	Seq      uint64
	Revision int64
}

// WriteFailed: the Write numbered Seq was not applied, or its outcome is
// unknown. The machine no longer knows what is stored for the shard and
// waits for the next Assigned (the driver resyncs).
type WriteFailed struct{ Seq uint64 }

func (Assigned) isEvent()     {}
func (Removed) isEvent()      {}
func (Heartbeat) isEvent()    {}
func (Tick) isEvent()         {}
func (FenceReplied) isEvent() {}
func (WriteDone) isEvent()    {}
func (WriteFailed) isEvent()  {}
