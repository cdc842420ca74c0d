package failover

import (
	"fmt"
	"time"

	"github.com/felixbroker/felix/cluster"
)

// Config is what a Machine is started with.
type Config struct {
	// Epoch is the control plane's election revision: every Write and
	// Fence carries it, so a deposed control plane's are refused.
	Epoch int64
	// Lease is L: the lease each Grant gives, and how long after the last
	// granted heartbeat a leader may be replaced.
	Lease time.Duration
	// Now is when this control plane started, on its monotonic clock. It
	// knows nothing of the leases granted before, so it promotes nobody
	// before Now+Lease.
	Now time.Duration
}

// Machine is the control plane's lease and promotion state machine. It is
// not safe for concurrent use: one goroutine (the driver) owns it, steps
// events in and drains actions out.
type Machine struct {
	epoch   int64
	lease   time.Duration
	started time.Duration // Config.Now
	now     time.Duration // the latest time stepped in, never less than started
	seq     uint64        // the last Write sent

	shards map[cluster.ShardID]*shard
	sent   map[uint64]cluster.ShardID // writes not answered yet, by Seq
	// disks is the disk each broker's latest heartbeat came from: a
	// replica naming the broker on another disk is gone for good (a broker
	// has one data directory, and a new one has a new disk id), so a
	// promotion does not wait for its answer.
	disks map[string]string

	actions []Action
}

// New returns a machine that knows no shard yet: the driver steps an
// Assigned for each stored assignment.
func New(cfg Config) (*Machine, error) {
	if cfg.Epoch <= 0 {
		return nil, fmt.Errorf("%w: epoch %d: an election revision is positive", ErrInvalidEvent, cfg.Epoch)
	}
	if cfg.Lease <= 0 {
		return nil, fmt.Errorf("%w: lease %v: it must be positive", ErrInvalidEvent, cfg.Lease)
	}
	return &Machine{epoch: cfg.Epoch, lease: cfg.Lease, started: cfg.Now, now: cfg.Now,
		shards: map[cluster.ShardID]*shard{}, sent: map[uint64]cluster.ShardID{}, disks: map[string]string{}}, nil
}

// Epoch is the election revision the machine was started with.
func (m *Machine) Epoch() int64 { return m.epoch }

// Lease is L, the duration of every lease the machine grants.
func (m *Machine) Lease() time.Duration { return m.lease }

// Step applies one event. An event it cannot apply returns an error
// matching ErrInvalidEvent and changes nothing.
func (m *Machine) Step(ev Event) error {
	if err := m.check(ev); err != nil {
		return err
	}
	switch ev := ev.(type) {
	case Assigned:
		m.assigned(ev)
	case Removed:
		m.removed(ev.Shard)
	case Heartbeat:
		m.heartbeat(ev)
	case Tick:
		m.tick(ev.Now)
	case FenceReplied:
		m.fenceReplied(ev)
	case WriteDone:
		m.writeDone(ev)
	case WriteFailed:
		m.writeFailed(ev.Seq)
	default:
		panic(fmt.Sprintf("felix/cluster/failover: bug: event %T is not handled", ev))
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

// advance moves the machine's clock to t, if t is later: the driver's
// events may interleave a heartbeat received a moment before a tick.
func (m *Machine) advance(t time.Duration) { m.now = max(m.now, t) }
