package cluster

import "fmt"

// Action is what the machine asks the driver to do, drained with
// Machine.Ready. The set is closed: the types below are all there are.
type Action interface{ isAction() }

// Write asks the driver to store Assignment under the shard's key, by
// compare-and-swap: only if the key's modification revision is still
// ExpectedRevision (0: the key must not exist) and the control plane's
// election key still has create revision Epoch. Step WriteDone or
// WriteFailed with Seq when it is answered.
type Write struct {
	Seq              uint64
	Epoch            int64
	Shard            ShardID
	Assignment       Assignment
	ExpectedRevision int64
}

// Delete asks the driver to remove the shard's assignment, guarded as a
// Write is; answered the same way.
type Delete struct {
	Seq              uint64
	Epoch            int64
	Shard            ShardID
	ExpectedRevision int64
}

// Unplaced reports an object whose shards could not be placed: its
// replication factor needs more brokers than are live. The machine keeps
// it and places it when enough brokers have joined; the driver surfaces
// Err to whoever created the object.
type Unplaced struct {
	Object ObjectID
	Needed int
	Live   int
}

// Err is the report as an error matching ErrTooFewBrokers.
func (u Unplaced) Err() error {
	return fmt.Errorf("%w: %v needs %s, %d %s live", ErrTooFewBrokers, u.Object, plural(u.Needed, "broker"), u.Live,
		map[bool]string{true: "is", false: "are"}[u.Live == 1])
}

// plural is "1 broker", "2 brokers".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Resync asks the driver to read the store's whole state and step it as a
// Snapshot. Until then the machine ignores every other event, and the
// outcomes of the writes it sent before.
type Resync struct{}

func (Write) isAction()    {}
func (Delete) isAction()   {}
func (Unplaced) isAction() {}
func (Resync) isAction()   {}
