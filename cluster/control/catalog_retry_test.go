package control

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/cluster/store"
	"github.com/felixbroker/felix/engine"
)

// lossyStore answers its first lose txns with store.ErrUnavailable, as
// etcd does when a proposal times out while its raft leadership moves:
// applied first when applied is set (the answer lost), not at all
// otherwise. between runs after each lost answer: another writer's step.
type lossyStore struct {
	store.Store
	mu      sync.Mutex
	lose    int
	applied bool
	between func()
}

func (s *lossyStore) Txn(ctx context.Context, txn store.Txn) (store.TxnResult, error) {
	s.mu.Lock()
	lost := s.lose > 0
	if lost {
		s.lose--
	}
	s.mu.Unlock()
	if !lost {
		return s.Store.Txn(ctx, txn)
	}
	if s.applied {
		if _, err := s.Store.Txn(ctx, txn); err != nil {
			return store.TxnResult{}, err
		}
	}
	if s.between != nil {
		s.between()
	}
	return store.TxnResult{}, store.ErrUnavailable
}

// lossyCatalog starts one broker and a control plane on s, and returns a
// catalog that writes through lossy (over s).
func lossyCatalog(t *testing.T, s *store.Memory, lossy *lossyStore) *Catalog {
	register(t, s, testBroker(1), nil)
	startController(t, s, "b1", nil)
	lossy.Store = s
	return NewCatalog(CatalogConfig{Store: lossy, PlaceWait: 30 * time.Second})
}

// A create whose txn etcd applied but whose answer it lost (a raft leader
// change) is the create's own, not someone else's name: it returns the
// entry at the incarnation the store gave it, placed; a second create of
// the name is then ErrExists.
func TestACatalogCreateWhoseAnswerWasLostIsItsOwn(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		c := lossyCatalog(t, s, &lossyStore{lose: 1, applied: true})
		e, err := c.CreateStream(t.Context(), streamID("orders"), streamConfig(2, 1))
		if err != nil {
			t.Fatalf("a create whose answer was lost: %v", err)
		}
		kv, _, err := s.Get(t.Context(), CatalogKey(e.Object))
		if err != nil || e.Incarnation != kv.CreateRevision {
			t.Fatalf("the create returned incarnation %d; the store created the key at %d (%v)", e.Incarnation, kv.CreateRevision, err)
		}
		if _, err := c.CreateStream(t.Context(), streamID("orders"), streamConfig(2, 1)); !errors.Is(err, engine.ErrStreamExists) {
			t.Fatalf("a second create: %v, want ErrStreamExists", err)
		}
	})
}

// A create etcd never applied is tried again, however many times it is
// refused so, within the create's wait.
func TestACatalogCreateRefusedWhileTheStoreIsUnavailableIsTriedAgain(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		c := lossyCatalog(t, s, &lossyStore{lose: 5})
		if _, err := c.CreateStream(t.Context(), streamID("orders"), streamConfig(2, 1)); err != nil {
			t.Fatalf("a create refused five times: %v", err)
		}
	})
}

// A create never applied, whose name another create took meanwhile, is
// ErrExists: the entry under the name is not its own.
func TestACatalogCreateWhoseNameWasTakenWhileUnansweredIsExists(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		lossy := &lossyStore{lose: 1}
		c := lossyCatalog(t, s, lossy)
		other := NewCatalog(CatalogConfig{Store: s})
		lossy.between = func() {
			if _, err := other.CreateStream(t.Context(), streamID("orders"), streamConfig(3, 1)); err != nil {
				t.Errorf("the other create: %v", err)
			}
		}
		if _, err := c.CreateStream(t.Context(), streamID("orders"), streamConfig(2, 1)); !errors.Is(err, engine.ErrStreamExists) {
			t.Fatalf("a create whose name was taken while it was unanswered: %v, want ErrStreamExists", err)
		}
	})
}

// A delete etcd applied but whose answer it lost succeeds (the name is
// free, as asked), at a revision the delete is at or before; a second
// delete is ErrNotFound.
func TestACatalogDeleteWhoseAnswerWasLostSucceeds(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		lossy := &lossyStore{}
		c := lossyCatalog(t, s, lossy)
		e, err := c.CreateStream(t.Context(), streamID("orders"), streamConfig(2, 1))
		if err != nil {
			t.Fatal(err)
		}
		lossy.mu.Lock()
		lossy.lose, lossy.applied = 1, true
		lossy.mu.Unlock()
		rev, err := c.delete(t.Context(), e.Object)
		if err != nil {
			t.Fatalf("a delete whose answer was lost: %v", err)
		}
		kv, now, _ := s.Get(t.Context(), CatalogKey(e.Object))
		if kv.Exists() || rev <= e.Incarnation || rev > now {
			t.Fatalf("the delete returned revision %d (created at %d, store at %d, key present %v)", rev, e.Incarnation, now, kv.Exists())
		}
		if err := c.Delete(t.Context(), e.Object); !errors.Is(err, engine.ErrStreamNotFound) {
			t.Fatalf("a second delete: %v, want ErrStreamNotFound", err)
		}
	})
}

// A store unavailable for longer than the create's wait ends it with the
// store's error (which says the write may have been applied), not with
// ErrNotPlaced (which says it was); here nothing was written.
func TestACatalogCreateGivesUpWhenTheStoreStaysUnavailable(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		lossy := &lossyStore{lose: 1 << 30}
		register(t, s, testBroker(1), nil)
		lossy.Store = s
		c := NewCatalog(CatalogConfig{Store: lossy, PlaceWait: 5 * time.Second})
		_, err := c.CreateStream(t.Context(), streamID("orders"), streamConfig(2, 1))
		if !errors.Is(err, store.ErrUnavailable) || errors.Is(err, ErrNotPlaced) {
			t.Fatalf("a create against a store unavailable throughout: %v, want ErrUnavailable alone", err)
		}
		if kv, _, _ := s.Get(t.Context(), CatalogKey(objectOf(streamID("orders")))); kv.Exists() {
			t.Fatal("a create never applied left an entry")
		}
	})
}
