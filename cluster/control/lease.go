package control

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/felixbroker/felix/cluster/store"
)

// keepAliveFraction: a lease is renewed every TTL/keepAliveFraction, so
// two renewals in a row can go unanswered before it ends.
const keepAliveFraction = 3

// errLeaseLost: a lease ended. Either the store no longer had it, or a
// full TTL passed since the last renewal that succeeded was sent: the
// store may have ended it already, so its holder stops counting on it.
var errLeaseLost = errors.New("felix/cluster/control: lease lost")

// grant asks for a lease and returns it with the time the request was
// sent, from which the lease is counted.
func grant(ctx context.Context, s store.Store, clock store.Clock, ttl time.Duration) (store.Lease, time.Time, error) {
	sent := clock.Now()
	l, err := s.Grant(ctx, ttl)
	return l, sent, err
}

// holdLease renews the lease every TTL/keepAliveFraction until ctx is
// done or the lease is lost. lost is called once, with an error matching
// errLeaseLost, at the moment the lease is lost: from a timer when a TTL
// passes since the send of the last renewal that succeeded, even while a
// renewal is still waiting for its answer. The caller's lost cancels ctx
// (or holdLease keeps waiting for it).
func holdLease(ctx context.Context, s store.Store, clock store.Clock, l store.Lease, sent time.Time, lost func(error)) {
	h := &leaseHolder{store: s, clock: clock, lease: l, lost: lost}
	h.arm(sent)
	defer h.disarm()
	for {
		if sleep(ctx, clock, h.lease.TTL/keepAliveFraction) != nil {
			return
		}
		if !h.renew(ctx) {
			return
		}
	}
}

// leaseHolder is holdLease's state: its watchdog timer, reset at every
// renewal, calls lost when the lease's TTL runs out.
type leaseHolder struct {
	store store.Store
	clock store.Clock
	lease store.Lease
	lost  func(error)

	mu       sync.Mutex
	watchdog store.Timer
	once     sync.Once
}

// renew sends one renewal; false when the lease is lost or ctx is done.
func (h *leaseHolder) renew(ctx context.Context) bool {
	sent := h.clock.Now()
	ttl, err := h.store.KeepAlive(ctx, h.lease.ID)
	switch {
	case err == nil:
		h.lease.TTL = ttl
		h.arm(sent)
		return true
	case errors.Is(err, store.ErrLeaseNotFound):
		h.fail(fmt.Errorf("%w: lease %x: %v", errLeaseLost, int64(h.lease.ID), err))
		return false
	}
	// Not answered: the next renewal may be, before the watchdog fires.
	return ctx.Err() == nil
}

// arm sets the watchdog to a TTL after sent.
func (h *leaseHolder) arm(sent time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.watchdog != nil {
		h.watchdog.Stop()
	}
	left := h.lease.TTL - h.clock.Now().Sub(sent)
	h.watchdog = h.clock.AfterFunc(left, func() {
		h.fail(fmt.Errorf("%w: lease %x: %v since the last renewal was sent", errLeaseLost, int64(h.lease.ID), h.lease.TTL))
	})
}

func (h *leaseHolder) disarm() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.watchdog.Stop()
}

func (h *leaseHolder) fail(err error) { h.once.Do(func() { h.lost(err) }) }

// sleep waits d on clock; it returns ctx's error if ctx is done first.
func sleep(ctx context.Context, clock store.Clock, d time.Duration) error {
	fired := make(chan struct{})
	t := clock.AfterFunc(d, func() { close(fired) })
	defer t.Stop()
	select {
	case <-fired:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// revoke ends a lease its holder is done with, bounded by revokeWaitMax;
// a lease already gone is not an error. Each attempt is bounded by
// revokeTryMax and the next sent at once: a proposal etcd took just as its
// raft leader changed may never be answered (in the kill nemesis a revoke
// sent to the member that had just become raft leader waited its whole
// 5 s, and the candidacy key it should have deleted held the election for
// 3.5 s more), while one sent again is.
func revoke(ctx context.Context, s store.Store, id store.LeaseID) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), revokeWaitMax)
	defer cancel()
	for {
		tctx, tcancel := context.WithTimeout(ctx, revokeTryMax)
		err := s.Revoke(tctx, id)
		tcancel()
		switch {
		case err == nil || errors.Is(err, store.ErrLeaseNotFound):
			return nil
		case ctx.Err() != nil || errors.Is(err, store.ErrClosed):
			return err
		case tctx.Err() == nil:
			// Refused at once (no leader yet, say): not a storm of them.
			if sleep(ctx, store.SystemClock(), revokeTryMax/10) != nil {
				return err
			}
		}
	}
}

// revokeTryMax bounds one attempt of a revoke: a store with a leader
// answers in milliseconds.
const revokeTryMax = 500 * time.Millisecond

// revokeWaitMax bounds a revoke at a stop: past it the lease ends by
// itself within its TTL.
const revokeWaitMax = 5 * time.Second
