package control

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster/store"
)

// TestARevokeNotAnsweredIsSentAgain: the first revoke is never answered
// (a proposal lost as etcd's raft leader changed); revoke sends it again
// after revokeTryMax and the lease, with the key on it, is gone well
// before revokeWaitMax.
func TestARevokeNotAnsweredIsSentAgain(t *testing.T) {
	inBubble(t, func(t *testing.T, m *store.Memory) {
		l, err := m.Grant(t.Context(), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Txn(t.Context(), store.Txn{Then: []store.Op{store.PutWithLease("k", []byte("v"), l.ID)}}); err != nil {
			t.Fatal(err)
		}
		s := &lostFirstRevoke{Store: m}
		began := time.Now()
		if err := revoke(t.Context(), s, l.ID); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(began); s.calls.Load() != 2 || took > 2*revokeTryMax {
			t.Fatalf("revoked after %d attempts and %v; want the second, one try's bound after the first", s.calls.Load(), took)
		}
		if kv, _, err := m.Get(t.Context(), "k"); err != nil || kv.Exists() {
			t.Fatalf("the key on the lease: %+v, %v; want it gone with the lease", kv, err)
		}
	})
}

// lostFirstRevoke is a store whose first Revoke is never answered.
type lostFirstRevoke struct {
	store.Store
	calls atomic.Int32
}

func (s *lostFirstRevoke) Revoke(ctx context.Context, id store.LeaseID) error {
	if s.calls.Add(1) == 1 {
		<-ctx.Done()
		return ctx.Err()
	}
	return s.Store.Revoke(ctx, id)
}
