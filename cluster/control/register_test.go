package control

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/store"
)

// countingStore counts the calls a test asks about.
type countingStore struct {
	store.Store
	keepAlives atomic.Int64
	ranges     atomic.Int64
}

func (s *countingStore) KeepAlive(ctx context.Context, id store.LeaseID) (time.Duration, error) {
	s.keepAlives.Add(1)
	return s.Store.KeepAlive(ctx, id)
}

func (s *countingStore) Range(ctx context.Context, prefix string) ([]store.KV, int64, error) {
	s.ranges.Add(1)
	return s.Store.Range(ctx, prefix)
}

func registered(t *testing.T, s store.Store, id string) (cluster.Broker, store.KV) {
	t.Helper()
	kv, _, err := s.Get(t.Context(), BrokerKey(id))
	if err != nil {
		t.Fatal(err)
	}
	if !kv.Exists() {
		return cluster.Broker{}, kv
	}
	b, err := decodeBroker(id, kv.Value)
	if err != nil {
		t.Fatal(err)
	}
	return b, kv
}

// TestARegistrationIsRenewedEveryThirdOfItsTTL, for ten TTLs, and goes at
// once when stopped.
func TestARegistrationIsRenewedEveryThirdOfItsTTL(t *testing.T) {
	inBubble(t, func(t *testing.T, m *store.Memory) {
		s := &countingStore{Store: m}
		r := register(t, s, testBroker(1), nil)
		start := time.Now()
		time.Sleep(10 * testTTL)
		synctest.Wait()
		if n := s.keepAlives.Load(); n != 10*keepAliveFraction {
			t.Fatalf("%d renewals in %v, want %d", n, time.Since(start), 10*keepAliveFraction)
		}
		b, kv := registered(t, s, "b1")
		if b != testBroker(1) || kv.Lease != r.Lease() || r.Registrations() != 1 {
			t.Fatalf("registration %+v under lease %x (Lease() %x), %d registrations", b, kv.Lease, r.Lease(), r.Registrations())
		}
		if err := r.Stop(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, kv := registered(t, s, "b1"); kv.Exists() {
			t.Fatal("the registration outlived Stop")
		}
		if err := r.Stop(t.Context()); err != nil {
			t.Fatalf("a second Stop: %v", err)
		}
	})
}

// TestALostRegistrationRegistersAgainUnderANewLease: the lease ends under
// the broker (revoked here, as etcd would end it); the next renewal finds
// it gone, and the broker registers again.
func TestALostRegistrationRegistersAgainUnderANewLease(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		r := register(t, s, testBroker(1), nil)
		old := r.Lease()
		if err := s.Revoke(t.Context(), old); err != nil {
			t.Fatal(err)
		}
		if _, kv := registered(t, s, "b1"); kv.Exists() {
			t.Fatal("the registration outlived its lease")
		}
		time.Sleep(testTTL / keepAliveFraction)
		synctest.Wait()
		b, kv := registered(t, s, "b1")
		if b != testBroker(1) || kv.Lease == old || kv.Lease != r.Lease() || r.Registrations() != 2 {
			t.Fatalf("after the loss: %+v under lease %x (old %x, Lease() %x), %d registrations", b, kv.Lease, old,
				r.Lease(), r.Registrations())
		}
	})
}

// TestARegistrationWhoseRenewalsGoUnansweredIsCountedLost: renewals that
// hang (the store is partitioned away) end the lease by the broker's own
// count, one TTL after the last renewal that was answered was sent; then
// it registers again.
func TestARegistrationWhoseRenewalsGoUnansweredIsCountedLost(t *testing.T) {
	inBubble(t, func(t *testing.T, m *store.Memory) {
		s := &hangingStore{Store: m, release: make(chan struct{})}
		r := register(t, s, testBroker(1), nil)
		s.hang.Store(true)
		renewed := time.Now()
		time.Sleep(testTTL - time.Nanosecond)
		synctest.Wait()
		if r.Registrations() != 1 {
			t.Fatal("registered again before a TTL passed")
		}
		s.hang.Store(false)
		close(s.release) // the hung renewals answer now, too late
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if r.Registrations() != 2 {
			t.Fatalf("%d registrations %v after the last renewal, want 2", r.Registrations(), time.Since(renewed))
		}
		if _, kv := registered(t, s, "b1"); kv.Lease != r.Lease() {
			t.Fatalf("registered under %x, want the new lease %x", kv.Lease, r.Lease())
		}
	})
}

// hangingStore holds every KeepAlive while hang is set, until release.
type hangingStore struct {
	store.Store
	hang    atomic.Bool
	release chan struct{}
}

func (s *hangingStore) KeepAlive(ctx context.Context, id store.LeaseID) (time.Duration, error) {
	if s.hang.Load() {
		<-s.release
		return 0, errors.New("test: no answer")
	}
	return s.Store.KeepAlive(ctx, id)
}

func TestARegistrationNeedsAnIDAndADisk(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		_, err := Register(t.Context(), RegistrationConfig{Store: s, Broker: cluster.Broker{ID: "b1"}})
		if !errors.Is(err, ErrInvalid) {
			t.Fatalf("no disk id: %v, want ErrInvalid", err)
		}
	})
}
