package cluster

import "fmt"

// Config is what a Machine is started with.
type Config struct {
	// Epoch is the control plane's election revision (the create revision
	// of its election key). Every write carries it, so the store refuses
	// the writes of a control plane that has been deposed.
	Epoch int64
}

// Machine is the control plane's placement state machine. It is not safe
// for concurrent use: one goroutine (the driver) owns it, steps events in
// and drains actions out.
type Machine struct {
	epoch  int64
	synced bool   // a Snapshot was stepped since the last Resync was asked
	seq    uint64 // the last Write or Delete sent

	brokers  map[string]Broker // registered, so live, by id
	objects  map[ObjectID]ObjectSpec
	shards   map[ShardID]*shard
	load     load
	unplaced map[ObjectID]Unplaced // objects with shards not placed, and their last report
	sent     map[uint64]sent       // writes and deletes not yet answered, by Seq
	dirty    map[ShardID]struct{}  // shards whose decision may differ from the store

	actions []Action
}

// New returns a machine that first asks for a Resync: it knows nothing
// until a Snapshot of the store is stepped.
func New(cfg Config) (*Machine, error) {
	if cfg.Epoch <= 0 {
		return nil, fmt.Errorf("%w: epoch %d: an election revision is positive", ErrInvalidEvent, cfg.Epoch)
	}
	m := &Machine{epoch: cfg.Epoch}
	m.reset()
	m.actions = append(m.actions, Resync{})
	return m, nil
}

func (m *Machine) reset() {
	m.brokers = map[string]Broker{}
	m.objects = map[ObjectID]ObjectSpec{}
	m.shards = map[ShardID]*shard{}
	m.load = newLoad()
	m.unplaced = map[ObjectID]Unplaced{}
	m.sent = map[uint64]sent{}
	m.dirty = map[ShardID]struct{}{}
}

// Epoch is the election revision the machine was started with.
func (m *Machine) Epoch() int64 { return m.epoch }

// Synced reports whether the machine works from the store's state: false
// from New, or from a failed write, until a Snapshot is stepped.
func (m *Machine) Synced() bool { return m.synced }

// Step applies one event. An event it cannot apply returns an error
// matching ErrInvalidEvent and changes nothing. While a Resync is
// outstanding, every event but a Snapshot is ignored.
func (m *Machine) Step(ev Event) error {
	if err := checkEvent(ev); err != nil {
		return err
	}
	if snap, ok := ev.(Snapshot); ok {
		m.resync(snap)
	} else if m.synced {
		if err := m.apply(ev); err != nil {
			return err
		}
	}
	m.flush()
	return nil
}

func (m *Machine) apply(ev Event) error {
	switch ev := ev.(type) {
	case BrokerJoined:
		return m.join(ev.Broker)
	case BrokerLeft:
		m.leave(ev)
	case ObjectCreated:
		return m.create(ev.Spec)
	case ObjectDeleted:
		m.remove(ev.ID)
	case WriteDone:
		return m.done(ev)
	case WriteFailed:
		m.failed(ev)
	default:
		panic(fmt.Sprintf("felix/cluster: bug: event %T is not handled", ev))
	}
	return nil
}

// Ready returns the actions decided since the last call, in the order they
// were decided, and forgets them: the caller owns the slice.
func (m *Machine) Ready() []Action {
	out := m.actions
	m.actions = nil
	return out
}
