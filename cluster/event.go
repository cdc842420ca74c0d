package cluster

// Event is what the driver steps into the Machine: a change it saw in the
// store, or the outcome of an action it carried out. The set is closed:
// the types below are all there are.
type Event interface{ isEvent() }

// BrokerJoined: a broker registered (or registered again). The same id
// with another disk id is a new incarnation: the replicas placed on the old
// disk are not its.
type BrokerJoined struct{ Broker Broker }

// BrokerLeft: a broker's registration lease ended. DiskID, when set, names
// the incarnation that left; the departure of one that was already
// replaced is ignored.
type BrokerLeft struct{ ID, DiskID string }

// ObjectCreated: a stream or a cache was written to the store.
type ObjectCreated struct{ Spec ObjectSpec }

// ObjectDeleted: a stream or a cache was removed from the store.
type ObjectDeleted struct{ ID ObjectID }

// WriteDone: the Write or Delete action numbered Seq was applied; Revision
// is the assignment key's new modification revision (ignored for a
// Delete).
type WriteDone struct {
	Seq      uint64
	Revision int64
}

// WriteFailed: the Write or Delete numbered Seq was not applied, or its
// outcome is unknown: its compare failed (someone else wrote), or the
// store did not answer. Either way the machine no longer knows what is
// stored, and asks for a Resync. (A write refused because the epoch guard
// failed means this control plane was deposed: stop stepping it.)
type WriteFailed struct{ Seq uint64 }

// Snapshot is the store's whole state as read at one revision, stepped
// when the machine asks for a Resync (and so first of all), or whenever
// the driver lost its watch (a compacted revision). Everything the machine
// knew before is replaced by it, and writes in flight are forgotten.
type Snapshot struct {
	Brokers     []Broker // the registered brokers: the live ones
	Objects     []ObjectSpec
	Assignments []StoredAssignment
}

func (BrokerJoined) isEvent()  {}
func (BrokerLeft) isEvent()    {}
func (ObjectCreated) isEvent() {}
func (ObjectDeleted) isEvent() {}
func (WriteDone) isEvent()     {}
func (WriteFailed) isEvent()   {}
func (Snapshot) isEvent()      {}
