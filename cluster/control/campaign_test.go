package control

import (
	"cmp"
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"testing/synctest"

	"github.com/felixbroker/felix/cluster/store"
)

// TestACandidateWhoseLeaseIsLostCampaignsAgainAtOnce: A leads; B read
// the election empty just before A's key landed, so it campaigned too,
// found A older and withdrew. Its store's Campaign then takes long to
// return, as etcd's does when the resign it sends on giving up is a
// proposal lost with the old raft leader (it waits etcd's request
// timeout, 7 s). B must not be held up by that campaign: when A stops, B
// campaigns at once under a new lease and leads, the old campaign still
// returning (two candidates held up for 7 s left none in the nemesis's
// one-way-in rounds: failovers of 9 s and more).
func TestACandidateWhoseLeaseIsLostCampaignsAgainAtOnce(t *testing.T) {
	inBubble(t, func(t *testing.T, m *store.Memory) {
		a := startController(t, m, "b1", nil)
		synctest.Wait()
		if !a.Status().Leading {
			t.Fatal("A does not lead")
		}
		slow := &slowResignStore{Store: m, release: make(chan struct{})}
		slow.vacantOnce.Store(true)
		defer close(slow.release) // before B's Close (cleanups run after)
		b := startController(t, slow, "b2", nil)
		synctest.Wait()
		if n := slow.grants.Load(); n != 1 {
			t.Fatalf("B granted %d leases, want 1: one campaign, withdrawn", n)
		}
		if candidates := electionKeys(t, m); len(candidates) != 1 || candidates[0] != "b1" {
			t.Fatalf("candidates %v: want A's alone, B withdrawn", candidates)
		}
		time.Sleep(3 * testTTL)
		synctest.Wait()
		if n := slow.grants.Load(); n != 1 || !a.Status().Leading {
			t.Fatalf("B granted %d leases while A leads (A leading %v), want no more: it waits for A's leadership to end", n, a.Status().Leading)
		}
		a.Close()
		synctest.Wait()
		if n := slow.grants.Load(); n != 2 || !b.Status().Leading {
			t.Fatalf("after A stopped B granted %d leases, leading %v; want a new candidacy at once, leading (its old campaign still returning)",
				n, b.Status().Leading)
		}
	})
}

// electionKeys is the values (broker ids) of the election's candidate
// keys, oldest first.
func electionKeys(t *testing.T, s store.Store) []string {
	t.Helper()
	kvs, _, err := s.Range(t.Context(), electionDir)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(kvs, func(a, b store.KV) int { return cmp.Compare(a.CreateRevision, b.CreateRevision) })
	var ids []string
	for _, kv := range kvs {
		ids = append(ids, string(kv.Value))
	}
	return ids
}

// slowResignStore is a store whose Campaign, once its context is done, returns only at release (as
// etcd's resign on a lost proposal does, past any lease), and whose first
// read of the election, while vacantOnce, is empty (read just before
// another candidate's key landed).
type slowResignStore struct {
	store.Store
	vacantOnce atomic.Bool
	grants     atomic.Int32
	release    chan struct{}
}

func (s *slowResignStore) Range(ctx context.Context, prefix string) ([]store.KV, int64, error) {
	kvs, rev, err := s.Store.Range(ctx, prefix)
	if prefix == electionDir && s.vacantOnce.Swap(false) {
		return nil, rev, err
	}
	return kvs, rev, err
}

func (s *slowResignStore) Grant(ctx context.Context, ttl time.Duration) (store.Lease, error) {
	s.grants.Add(1)
	return s.Store.Grant(ctx, ttl)
}

func (s *slowResignStore) Campaign(ctx context.Context, election string, lease store.LeaseID, value []byte) (*store.Leadership, error) {
	lead, err := s.Store.Campaign(ctx, election, lease, value)
	if ctx.Err() != nil {
		<-s.release
	}
	return lead, err
}

// TestALostRegistrationsGrantLostInTheStoreIsTriedAgain: the
// registration's lease is lost, and the grant of the next one is never
// answered (a proposal etcd forwarded to a raft leader just cut off: etcd
// answers it only at its request timeout, 7 s). That grant is given up a
// third of the TTL after it was sent and the next one registers: the
// broker is registered again within two thirds of a TTL, not once the
// store gives up.
func TestALostRegistrationsGrantLostInTheStoreIsTriedAgain(t *testing.T) {
	inBubble(t, func(t *testing.T, m *store.Memory) {
		s := &lostGrantStore{Store: m}
		r := register(t, s, testBroker(1), nil)
		s.lose.Store(1)
		if err := m.Revoke(t.Context(), r.Lease()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(testTTL / keepAliveFraction) // the renewal that finds the lease gone; its grant is lost
		synctest.Wait()
		if r.Registrations() != 1 {
			t.Fatalf("%d registrations, want 1 while the grant is lost", r.Registrations())
		}
		time.Sleep(2 * testTTL / keepAliveFraction) // the lost grant given up, the wait before the next
		synctest.Wait()
		if r.Registrations() != 2 {
			t.Fatalf("%d registrations two thirds of a TTL after the lost grant, want 2", r.Registrations())
		}
		if _, kv := registered(t, s, "b1"); kv.Lease != r.Lease() {
			t.Fatalf("registered under %x, want the new lease %x", kv.Lease, r.Lease())
		}
	})
}

// TestACandidacysGrantLostInTheStoreIsTriedAgain: a control plane's term
// ends (its lease lost) and the grant of its next candidacy's lease is
// never answered: it is given up a TTL after it was sent, and after the
// retry delay the controller campaigns again, and leads.
func TestACandidacysGrantLostInTheStoreIsTriedAgain(t *testing.T) {
	inBubble(t, func(t *testing.T, m *store.Memory) {
		s := &lostGrantStore{Store: m}
		a := startController(t, s, "b1", nil)
		synctest.Wait()
		candidates, _, err := m.Range(t.Context(), electionDir)
		if err != nil || len(candidates) != 1 || !a.Status().Leading {
			t.Fatalf("candidates %v, %v, status %+v: want A's", candidates, err, a.Status())
		}
		s.lose.Store(1)
		if err := m.Revoke(t.Context(), candidates[0].Lease); err != nil {
			t.Fatal(err)
		}
		time.Sleep(testTTL / keepAliveFraction) // the renewal that finds the lease gone; the next grant is lost
		synctest.Wait()
		if a.Status().Leading {
			t.Fatalf("A leads with its lease revoked: %+v", a.Status())
		}
		time.Sleep(testTTL + RetryDelayDefault)
		synctest.Wait()
		if st := a.Status(); !st.Leading || st.Terms != 2 {
			t.Fatalf("A a TTL and a retry delay after its grant was lost: %+v, want leading its second term", st)
		}
	})
}

// lostGrantStore loses the next lose grants: each is answered only when
// its context is done.
type lostGrantStore struct {
	store.Store
	lose atomic.Int32
}

func (s *lostGrantStore) Grant(ctx context.Context, ttl time.Duration) (store.Lease, error) {
	if s.lose.Add(-1) >= 0 {
		<-ctx.Done()
		return store.Lease{}, ctx.Err()
	}
	return s.Store.Grant(ctx, ttl)
}

// TestACandidateWaitsForAVacancyBeforeItCampaigns: while A leads, B puts
// no key in the election (a key in line would lead next whether or not
// its broker still lives); once A's leadership ends, B campaigns and
// leads.
func TestACandidateWaitsForAVacancyBeforeItCampaigns(t *testing.T) {
	inBubble(t, func(t *testing.T, m *store.Memory) {
		a := startController(t, m, "b1", nil)
		synctest.Wait()
		b := startController(t, m, "b2", nil)
		time.Sleep(3 * testTTL)
		synctest.Wait()
		if candidates := electionKeys(t, m); len(candidates) != 1 || candidates[0] != "b1" || !a.Status().Leading {
			t.Fatalf("candidates %v (A leading %v): want A's key alone", candidates, a.Status().Leading)
		}
		a.Close()
		synctest.Wait()
		if !b.Status().Leading {
			t.Fatalf("B %+v once A stopped: want it leading", b.Status())
		}
	})
}
