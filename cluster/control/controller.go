package control

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/cluster/store"
)

// Defaults of ControllerConfig.
const (
	// ControlLeaseTTLDefault is the control plane's lease: a control plane
	// that stops renewing it is replaced within it.
	ControlLeaseTTLDefault = 5 * time.Second
	// RetryDelayDefault is the wait after a term that ended with an error
	// of the store's (not a deposition) before campaigning again.
	RetryDelayDefault = time.Second
)

// ControllerConfig configures StartController.
type ControllerConfig struct {
	Store store.Store
	// ID names the broker running this control plane: its candidate's
	// value in the election (store.Leader reads it). Required.
	ID string
	// LeaseTTL is the lease the candidate campaigns under, renewed every
	// LeaseTTL/3; 0 is ControlLeaseTTLDefault.
	LeaseTTL time.Duration
	// RetryDelay: 0 is RetryDelayDefault.
	RetryDelay time.Duration
	// Clock times the renewals and the retries; nil is store.SystemClock().
	Clock  store.Clock
	Logger *slog.Logger
	// Peers, when set, runs the shard lease and failover driver
	// (FailoverDriver) beside placement in each term: it answers the
	// heartbeats Controller.ServeHeartbeat routes to it and sends its
	// fences over Peers. Nil runs none: heartbeats are refused not_leader
	// and no leader is ever replaced.
	Peers peer.Transport
	// ShardLease is L, the shard lease granted with each heartbeat, after
	// which a silent leader is replaced; 0 is ShardLeaseDefault (4 s).
	ShardLease time.Duration
}

func (c *ControllerConfig) defaults() {
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = ControlLeaseTTLDefault
	}
	if c.RetryDelay <= 0 {
		c.RetryDelay = RetryDelayDefault
	}
	if c.Clock == nil {
		c.Clock = store.SystemClock()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.ShardLease <= 0 {
		c.ShardLease = ShardLeaseDefault
	}
}

// Controller is one broker's candidacy for the control plane: it
// campaigns, and while it leads it drives a cluster.Machine over the
// store; when it is deposed or its lease is lost it stops driving and
// campaigns again. Every broker may run one; one leads at a time. Its
// methods are safe for concurrent use.
type Controller struct {
	cfg    ControllerConfig
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	status ControllerStatus

	failover atomic.Pointer[FailoverDriver] // the term's, while one runs
}

// ControllerStatus is what a Controller has done.
type ControllerStatus struct {
	Leading bool
	Epoch   int64 // of the term now led, or the last one
	Terms   int   // elections won
	// Deposed counts the terms ended by the epoch guard refusing a write
	// or the lease being lost.
	Deposed int
	// LastEnd is why the last term ended; nil while none has.
	LastEnd error
}

// StartController starts campaigning on its own goroutine, until Close.
func StartController(cfg ControllerConfig) (*Controller, error) {
	cfg.defaults()
	if cfg.ID == "" || cfg.Store == nil {
		return nil, fmt.Errorf("%w: a controller needs a store and an id", ErrInvalid)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Controller{cfg: cfg, cancel: cancel, done: make(chan struct{})}
	go c.run(ctx)
	return c, nil
}

// Status copies the controller's status.
func (c *Controller) Status() ControllerStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

// Close stops campaigning or driving, and returns once the goroutines
// have; a leading controller revokes its lease, so another leads at once.
// Safe to call more than once.
func (c *Controller) Close() {
	c.cancel()
	<-c.done
}

// run campaigns, term after term, until ctx is done.
func (c *Controller) run(ctx context.Context) {
	defer close(c.done)
	for ctx.Err() == nil {
		err := c.term(ctx)
		if ctx.Err() != nil {
			return
		}
		c.cfg.Logger.Warn("control plane term ended", "id", c.cfg.ID, "err", err)
		if !errors.Is(err, errDeposed) && !errors.Is(err, errLeaseLost) {
			_ = sleep(ctx, c.cfg.Clock, c.cfg.RetryDelay)
		}
	}
}

// term is one candidacy under a fresh lease: campaign, then drive while it
// leads. The lease is revoked when it ends, which withdraws the candidate
// or hands the leadership on.
func (c *Controller) term(ctx context.Context) error {
	s := c.cfg.Store
	lease, sent, err := grant(ctx, s, c.cfg.Clock, c.cfg.LeaseTTL)
	if err != nil {
		return err
	}
	held, lost := context.WithCancelCause(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { holdLease(held, s, c.cfg.Clock, lease, sent, lost) })
	defer func() {
		lost(nil)
		wg.Wait()
		_ = revoke(ctx, s, lease.ID)
	}()
	lead, err := s.Campaign(held, Election, lease.ID, []byte(c.cfg.ID))
	if err != nil {
		return causeOr(held, err)
	}
	c.began(lead.Epoch())
	err = causeOr(held, c.driveTerm(held, s, lead))
	c.ended(err)
	return err
}

// causeOr is why ctx ended, if it did (a lost lease), else err.
func causeOr(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(err, errDeposed) {
		return cause
	}
	return err
}

func (c *Controller) began(epoch int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status.Leading, c.status.Epoch = true, epoch
	c.status.Terms++
	c.cfg.Logger.Info("control plane leads", "id", c.cfg.ID, "epoch", epoch)
}

func (c *Controller) ended(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status.Leading, c.status.LastEnd = false, err
	if errors.Is(err, errDeposed) || errors.Is(err, errLeaseLost) {
		c.status.Deposed++
	}
}
