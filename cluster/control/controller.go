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
	// OnPromotion is each term's FailoverConfig.OnPromotion: nil but in a
	// test that journals the promotions.
	OnPromotion func(PromotionReport)
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
	// behind are the goroutines a term left behind when it ended: the
	// revoke of its lease and, when its lease was lost while it
	// campaigned, the campaign still returning. Close waits for them.
	behind sync.WaitGroup

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
	defer func() {
		c.behind.Wait()
		close(c.done)
	}()
	for ctx.Err() == nil {
		err := c.term(ctx)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, errLostRace) {
			c.cfg.Logger.Debug("control plane candidacy withdrawn: another candidate campaigned first", "id", c.cfg.ID)
			continue // to the next vacancy
		}
		c.cfg.Logger.Warn("control plane term ended", "id", c.cfg.ID, "err", err)
		if !errors.Is(err, errDeposed) && !errors.Is(err, errLeaseLost) {
			_ = sleep(ctx, c.cfg.Clock, c.cfg.RetryDelay)
		}
	}
}

// term is one candidacy under a fresh lease, once the election has no
// candidate (awaitVacancy): campaign, then drive while it leads. The
// lease is revoked when it ends, which withdraws the candidate or hands
// the leadership on.
//
// Nothing the term sends to the store may hold up the next candidacy past
// the lease it campaigns under: a proposal that etcd forwarded to a raft
// leader just cut off is never answered, and etcd gives up on it only
// after its request timeout (5 s and two election timeouts, 7 s), far
// past the lease. So the grant is bounded by the lease's TTL; a campaign
// whose lease is lost is left to return on its own (etcd's Campaign, its
// context done, resigns on the client's context, without a deadline);
// and the revoke at the end runs beside the next term (bounded by
// revokeWaitMax; an unrevoked candidacy ends with its lease at the store).
func (c *Controller) term(ctx context.Context) error {
	s := c.cfg.Store
	if err := c.awaitVacancy(ctx); err != nil {
		return err
	}
	gctx, cancel := context.WithTimeout(ctx, c.cfg.LeaseTTL)
	lease, sent, err := grant(gctx, s, c.cfg.Clock, c.cfg.LeaseTTL)
	cancel()
	if err != nil {
		return err
	}
	held, lost := context.WithCancelCause(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { holdLease(held, s, c.cfg.Clock, lease, sent, lost) })
	defer func() {
		lost(nil)
		wg.Wait()
		c.behind.Go(func() { _ = revoke(ctx, s, lease.ID) })
	}()
	lead, err := c.campaign(held, lease.ID)
	if err != nil {
		return causeOr(held, err)
	}
	c.began(lead.Epoch())
	err = causeOr(held, c.driveTerm(held, s, lead))
	c.ended(err)
	return err
}

// campaign campaigns under the lease until it leads, another candidate
// is found older (errLostRace: watchRace) or held is done, whichever
// comes first: once held is done it returns at once, and the
// store's Campaign is left to return by itself (c.behind waits for it),
// its leadership, if it won one, unused. It is not driven: its lease was
// lost or the controller is closing, and the lease is revoked.
func (c *Controller) campaign(held context.Context, lease store.LeaseID) (*store.Leadership, error) {
	type won struct {
		lead *store.Leadership
		err  error
	}
	result := make(chan won, 1)
	c.behind.Go(func() {
		lead, err := c.cfg.Store.Campaign(held, Election, lease, []byte(c.cfg.ID))
		result <- won{lead, err}
	})
	race, stopRace := context.WithCancel(held)
	raced := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Go(func() { raced <- c.watchRace(race, lease) })
	defer func() {
		stopRace()
		wg.Wait()
	}()
	lostRace := (<-chan error)(raced)
	for {
		select {
		case r := <-result:
			return r.lead, r.err
		case err := <-lostRace:
			if errors.Is(err, errLostRace) {
				return nil, err // withdrawn when the term revokes the lease
			}
			lostRace = nil // the watch failed: campaign on without it
		case <-held.Done():
			return nil, held.Err()
		}
	}
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
