package control

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/failover"
	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/cluster/store"
)

// ShardLeaseDefault is L, the shard lease a control plane grants with
// each heartbeat answered, when ControllerConfig.ShardLease (or
// FailoverConfig.Lease) is 0: 4 s. A leader that stops heartbeating is
// replaced L after its last granted heartbeat was received.
const ShardLeaseDefault = 4 * time.Second

// heartbeatsQueued bounds the heartbeats waiting for the driver's
// goroutine; one past it is refused (ERROR overloaded) and the broker
// sends its next one.
const heartbeatsQueued = 1024

// FailoverConfig configures a FailoverDriver.
type FailoverConfig struct {
	// Store holds the assignments and the catalog; Lead is the term's won
	// election: its epoch is the machine's, carried by every grant, fence
	// and write, and guards every write. Both required.
	Store store.Store
	Lead  *store.Leadership
	// Peers sends the fences, to each replica's broker. Required.
	Peers peer.Transport
	// Lease is L; 0 is ShardLeaseDefault.
	Lease  time.Duration
	Logger *slog.Logger
	// OnPromotion, when set, is told of every promotion's start once its
	// first write (the new generation, no leader) was applied
	// (PromotionReport), on a goroutine of the driver's. Nil but in a test.
	OnPromotion func(PromotionReport)
}

// FailoverDriver is one control-plane term's IO around a failover.Machine
// (cluster/failover/doc.go lists the caller's duties): it steps the
// stored assignments and their changes in, answers each heartbeat with
// the machine's grant, sends its fences and carries out its writes as
// compare-and-swaps guarded by the term's epoch. One goroutine (Run) owns
// the machine; the others hand it events through a channel.
// ServeHeartbeat is safe for concurrent use.
type FailoverDriver struct {
	store store.Store
	lead  *store.Leadership
	peers peer.Transport
	lease time.Duration
	log   *slog.Logger
	start time.Time // the term's start: the machine's clock is time.Since(start)
	// onPromotion is FailoverConfig.OnPromotion.
	onPromotion func(PromotionReport)

	heartbeats chan heartbeatIn  // from ServeHeartbeat
	events     chan func() error // from the watch, fences and writes
	mu         sync.Mutex        // guards stopped against the heartbeats' sends
	stopped    bool              // Run returned: heartbeats are refused
	wg         sync.WaitGroup    // the watch's, the fences' and the writes' goroutines
	ran        chan struct{}     // closed when Run begins: Run runs once
	runOnce    sync.Once         // closes ran
	m          *failover.Machine // owned by Run's goroutine, as is all below
	replies    map[heartbeatKey]peer.Reply
	objects    map[cluster.ObjectID]objectFailover // catalog entries read
	known      map[cluster.ShardID]bool            // shards stepped Assigned and not Removed
	stepErrors int                                 // events the machine refused (logged)
	granted    map[cluster.ShardID]grantedTo       // the lease last granted for each shard (logged once)
	waited     bool                                // the term's first lease has passed (logged once)
}

// objectFailover is what the machine needs of an object's catalog entry.
type objectFailover struct {
	replicationFactor int
	consistency       failover.Consistency
	replicated        bool // an object of more than one replica: only its shards fail over
	acksDurable       bool // its FsyncMode is OnCommit: every acknowledgement follows the fsync
}

// errFailoverStopped: Run was called twice.
var errFailoverStopped = errors.New("felix/cluster/control: a failover driver runs once")

// NewFailoverDriver returns a driver for the term cfg.Lead leads, its
// clock started now: it promotes nobody before a lease from now, since
// it knows nothing of the leases granted before. Call Run.
func NewFailoverDriver(cfg FailoverConfig) (*FailoverDriver, error) {
	if cfg.Store == nil || cfg.Lead == nil || cfg.Peers == nil {
		return nil, fmt.Errorf("%w: a failover driver needs a store, a leadership and a peer transport", ErrInvalid)
	}
	if cfg.Lease <= 0 {
		cfg.Lease = ShardLeaseDefault
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	m, err := failover.New(failover.Config{Epoch: cfg.Lead.Epoch(), Lease: cfg.Lease, Now: 0})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return &FailoverDriver{store: cfg.Store, lead: cfg.Lead, peers: cfg.Peers, lease: cfg.Lease, log: cfg.Logger,
		start: time.Now(), onPromotion: cfg.OnPromotion, heartbeats: make(chan heartbeatIn, heartbeatsQueued), events: make(chan func() error, 64),
		ran: make(chan struct{}), m: m, replies: map[heartbeatKey]peer.Reply{},
		objects: map[cluster.ObjectID]objectFailover{}, known: map[cluster.ShardID]bool{},
		granted: map[cluster.ShardID]grantedTo{}}, nil
}

// Epoch is the term's epoch, carried by every grant and fence.
func (d *FailoverDriver) Epoch() int64 { return d.m.Epoch() }

// Lease is L.
func (d *FailoverDriver) Lease() time.Duration { return d.lease }

// now is the machine's clock: the time since the term began, monotonic.
func (d *FailoverDriver) now() time.Duration { return time.Since(d.start) }

// Run drives the machine until ctx is done or the term ends: deposed
// (the epoch guard refused a write: errDeposed and store.ErrNotLeader),
// or the store could not be read or watched. It returns why; once it
// has, heartbeats are refused not_leader.
func (d *FailoverDriver) Run(ctx context.Context) error {
	first := false
	d.runOnce.Do(func() { first = true; close(d.ran) })
	if !first {
		return errFailoverStopped
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer func() {
		cancel(nil)
		d.stop()
		d.wg.Wait()
	}()
	d.wg.Go(func() { d.follow(ctx) })
	tick := time.NewTicker(max(d.lease/8, time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case h := <-d.heartbeats:
			d.heartbeat(ctx, h)
		case f := <-d.events:
			if err := f(); err != nil {
				return err
			}
		case <-tick.C:
			d.step(ctx, failover.Tick{Now: d.now()})
			d.logWaited()
		}
	}
}

// logWaited logs, once a term, that its wait of a full lease before any
// promotion is over.
func (d *FailoverDriver) logWaited() {
	if d.waited || d.now() < d.lease {
		return
	}
	d.waited = true
	d.log.Info("control plane failover: the term has waited a lease; promotions may begin", "epoch", d.m.Epoch(),
		"since_term_began", d.now())
}

// stop refuses every heartbeat from now on, those queued and those whose
// grant was not sent too.
func (d *FailoverDriver) stop() {
	d.mu.Lock()
	d.stopped = true
	d.mu.Unlock()
	for {
		select {
		case h := <-d.heartbeats:
			refuseNotLeader(h.reply, "the control plane's term ended")
		default:
			for k, r := range d.replies {
				refuseNotLeader(r, "the control plane's term ended")
				delete(d.replies, k)
			}
			return
		}
	}
}

// hand queues f for the driver's goroutine; false when the term ended
// first.
func (d *FailoverDriver) hand(ctx context.Context, f func() error) bool {
	select {
	case d.events <- f:
		return true
	case <-ctx.Done():
		return false
	}
}

// step steps ev and carries out what the machine asks. An event the
// machine refuses is logged and left out: the machine is unchanged by it.
func (d *FailoverDriver) step(ctx context.Context, ev failover.Event) {
	if err := d.m.Step(ev); err != nil {
		d.stepErrors++
		d.log.Error("control plane failover: an event the machine refused", "event", fmt.Sprintf("%T", ev), "err", err)
		return
	}
	for _, a := range d.m.Ready() {
		switch a := a.(type) {
		case failover.Grant:
			d.grant(a)
		case failover.Fence:
			d.fence(ctx, a)
		case failover.Write:
			d.write(ctx, a)
		}
	}
}

// driveTerm runs one term the Controller leads: placement's driver and,
// when the Controller has a peer transport, the failover driver beside
// it, routing heartbeats to it meanwhile. The first to end ends the
// other; the term's error is the first one's.
func (c *Controller) driveTerm(ctx context.Context, s store.Store, lead *store.Leadership) error {
	if c.cfg.Peers == nil {
		return drive(ctx, s, lead, c.cfg.Logger)
	}
	fd, err := NewFailoverDriver(FailoverConfig{Store: s, Lead: lead, Peers: c.cfg.Peers, Lease: c.cfg.ShardLease,
		Logger: c.cfg.Logger, OnPromotion: c.cfg.OnPromotion})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	wg.Go(func() { cancel(fd.Run(ctx)) })
	c.failover.Store(fd)
	err = drive(ctx, s, lead, c.cfg.Logger)
	c.failover.CompareAndSwap(fd, nil)
	cancel(err)
	wg.Wait()
	return context.Cause(ctx)
}
