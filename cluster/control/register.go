package control

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/store"
)

// RegistrationTTLDefault is a registration's lease when the config says
// nothing: the control plane sees a broker gone within it.
const RegistrationTTLDefault = 5 * time.Second

// RegistrationConfig configures Register.
type RegistrationConfig struct {
	Store  store.Store
	Broker cluster.Broker // ID and DiskID are required
	// TTL is the registration's lease (rounded up to whole seconds by the
	// store); 0 is RegistrationTTLDefault. It is renewed every TTL/3.
	TTL time.Duration
	// Clock times the renewals; nil is store.SystemClock() (inside a
	// testing/synctest bubble, the bubble's clock).
	Clock  store.Clock
	Logger *slog.Logger
}

func (c *RegistrationConfig) defaults() {
	if c.TTL <= 0 {
		c.TTL = RegistrationTTLDefault
	}
	if c.Clock == nil {
		c.Clock = store.SystemClock()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Registration is a broker registered under a lease it keeps alive. If
// the lease is lost (the store ended it, or a TTL passed without a
// renewal answered), it registers again under a new lease, so the control
// plane sees the broker leave and join again. Its methods are safe for
// concurrent use.
type Registration struct {
	cfg    RegistrationConfig
	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex
	lease store.LeaseID // the lease of the registration now stored
	count int           // registrations stored: 1, then one per loss
}

// Register stores the broker's registration within ctx, then keeps it
// until Stop. It overwrites a registration under the same id (this
// broker's, from before a restart, whose lease has not ended yet: two
// live brokers with one id are a misconfiguration, and the last to
// register wins).
func Register(ctx context.Context, cfg RegistrationConfig) (*Registration, error) {
	cfg.defaults()
	if err := cfg.Broker.Check(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	r := &Registration{cfg: cfg, done: make(chan struct{})}
	lease, sent, err := r.register(ctx)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.cancel = cancel
	go r.run(runCtx, lease, sent)
	return r, nil
}

// register grants a lease and puts the registration under it.
func (r *Registration) register(ctx context.Context) (store.Lease, time.Time, error) {
	s := r.cfg.Store
	lease, sent, err := grant(ctx, s, r.cfg.Clock, r.cfg.TTL)
	if err != nil {
		return store.Lease{}, time.Time{}, fmt.Errorf("felix/cluster/control: register %q: %w", r.cfg.Broker.ID, err)
	}
	put := store.PutWithLease(BrokerKey(r.cfg.Broker.ID), encodeBroker(r.cfg.Broker), lease.ID)
	if _, err := s.Txn(ctx, store.Txn{Then: []store.Op{put}}); err != nil {
		_ = revoke(ctx, s, lease.ID)
		return store.Lease{}, time.Time{}, fmt.Errorf("felix/cluster/control: register %q: %w", r.cfg.Broker.ID, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lease = lease.ID
	r.count++
	return lease, sent, nil
}

// run holds the lease, and registers again each time it is lost.
func (r *Registration) run(ctx context.Context, lease store.Lease, sent time.Time) {
	defer close(r.done)
	for {
		held, lost := context.WithCancelCause(ctx)
		holdLease(held, r.cfg.Store, r.cfg.Clock, lease, sent, lost)
		lost(nil)
		if ctx.Err() != nil {
			return
		}
		r.cfg.Logger.Warn("cluster registration lost; registering again", "broker", r.cfg.Broker.ID,
			"err", context.Cause(held))
		var err error
		if lease, sent, err = r.reregister(ctx); err != nil {
			return
		}
	}
}

// reregister registers under a new lease, retrying every TTL/3 until it
// does or ctx is done (its error). Each try is bounded by TTL/3: a grant
// or a put that etcd forwarded to a raft leader just cut off is never
// answered, and etcd gives up on it only after its request timeout (7 s),
// while the broker stays unregistered (its peers cannot resolve it, so no
// control plane can fence it).
func (r *Registration) reregister(ctx context.Context) (store.Lease, time.Time, error) {
	for {
		tctx, cancel := context.WithTimeout(ctx, r.cfg.TTL/keepAliveFraction)
		lease, sent, err := r.register(tctx)
		cancel()
		if err == nil || ctx.Err() != nil {
			return lease, sent, err
		}
		r.cfg.Logger.Warn("cluster registration failed", "broker", r.cfg.Broker.ID, "err", err)
		if err := sleep(ctx, r.cfg.Clock, r.cfg.TTL/keepAliveFraction); err != nil {
			return store.Lease{}, time.Time{}, err
		}
	}
}

// Lease is the lease the registration is stored under now.
func (r *Registration) Lease() store.LeaseID {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lease
}

// Registrations counts the registrations stored: 1 at Register, one more
// for each lease lost.
func (r *Registration) Registrations() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count
}

// Stop stops renewing and deregisters: the lease is revoked, so the
// registration goes at once (ctx, and at most revokeWaitMax, bound the
// wait; otherwise it goes within its TTL). Safe to call more than once.
func (r *Registration) Stop(ctx context.Context) error {
	r.cancel()
	<-r.done
	err := revoke(ctx, r.cfg.Store, r.Lease())
	if errors.Is(err, store.ErrClosed) {
		return nil // the store is gone, and the lease with it
	}
	return err
}
