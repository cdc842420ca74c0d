package store

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"
)

// leaseTTLMax bounds a lease's TTL: a control plane's leases last seconds.
const leaseTTLMax = 24 * time.Hour

// memLease is one lease of the in-memory store.
type memLease struct {
	id       LeaseID
	ttl      time.Duration
	deadline time.Time // it expires when the clock reaches this
	keys     map[string]struct{}
	timer    Timer
}

// grantedTTL is the TTL both implementations grant for ttl: whole seconds,
// at least one, as etcd counts them.
func grantedTTL(ttl time.Duration) (time.Duration, error) {
	if ttl <= 0 || ttl > leaseTTLMax {
		return 0, fmt.Errorf("%w: a lease TTL of %v (from 1ns to %v)", ErrInvalid, ttl, leaseTTLMax)
	}
	return (ttl + time.Second - 1).Truncate(time.Second), nil
}

// Grant implements Store.
func (s *Memory) Grant(ctx context.Context, ttl time.Duration) (Lease, error) {
	granted, err := grantedTTL(ttl)
	if err != nil {
		return Lease{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.beginLocked(ctx); err != nil {
		return Lease{}, err
	}
	s.leaseSeq++
	l := &memLease{id: s.leaseSeq, ttl: granted, keys: make(map[string]struct{})}
	s.leases[l.id] = l
	s.renewLocked(l)
	return Lease{ID: l.id, TTL: granted}, nil
}

// KeepAlive implements Store.
func (s *Memory) KeepAlive(ctx context.Context, id LeaseID) (time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.beginLocked(ctx); err != nil {
		return 0, err
	}
	l := s.leases[id]
	if l == nil {
		return 0, fmt.Errorf("%w: lease %x", ErrLeaseNotFound, int64(id))
	}
	s.renewLocked(l)
	return l.ttl, nil
}

// Revoke implements Store.
func (s *Memory) Revoke(ctx context.Context, id LeaseID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.beginLocked(ctx); err != nil {
		return err
	}
	l := s.leases[id]
	if l == nil {
		return fmt.Errorf("%w: lease %x", ErrLeaseNotFound, int64(id))
	}
	s.revokeLocked(l)
	return nil
}

// renewLocked sets the lease's deadline a TTL from now, and its timer.
func (s *Memory) renewLocked(l *memLease) {
	if l.timer != nil {
		l.timer.Stop()
	}
	l.deadline = s.clock.Now().Add(l.ttl)
	l.timer = s.clock.AfterFunc(l.ttl, s.expire)
}

// expire is the lease timers' callback: it expires whatever is due.
func (s *Memory) expire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.expireLocked()
	}
}

// expireLocked revokes every lease whose deadline has passed, earliest
// first (ties by id), each in its own revision. Every operation calls it
// first, so expiry depends on the clock alone, not on when a timer ran.
func (s *Memory) expireLocked() {
	now := s.clock.Now()
	var due []*memLease
	for _, l := range s.leases {
		if !l.deadline.After(now) {
			due = append(due, l)
		}
	}
	slices.SortFunc(due, func(a, b *memLease) int {
		if c := a.deadline.Compare(b.deadline); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	for _, l := range due {
		s.revokeLocked(l)
	}
}

// revokeLocked ends a lease and deletes its keys, in key order, in one
// revision (as etcd's lessor does).
func (s *Memory) revokeLocked(l *memLease) {
	l.timer.Stop()
	delete(s.leases, l.id)
	s.applyLocked(deletes(slices.Sorted(maps.Keys(l.keys))))
}

func deletes(keys []string) []Op {
	ops := make([]Op, len(keys))
	for i, k := range keys {
		ops[i] = Delete(k)
	}
	return ops
}

// detachLocked removes a key from the lease it was attached to.
func (s *Memory) detachLocked(kv KV) {
	if l := s.leases[kv.Lease]; l != nil {
		delete(l.keys, kv.Key)
	}
}

// leasesExistLocked refuses a txn that attaches a key to a lease that is
// not there, as etcd does.
func (s *Memory) leasesExistLocked(ops []Op) error {
	for _, o := range ops {
		if o.kind == opPut && o.lease != NoLease && s.leases[o.lease] == nil {
			return fmt.Errorf("%w: lease %x (put of %q)", ErrLeaseNotFound, int64(o.lease), o.key)
		}
	}
	return nil
}
