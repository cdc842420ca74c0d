package control

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/felixbroker/felix/cluster/store"
)

// TestADeposedControlPlanesWriteIsRefused: control plane A leads, B waits.
// A freezes: its clock stops, so it neither renews its lease nor notices
// that the lease ran out. The store's clock goes on; A's lease expires
// and B leads. A stream is created: A, still believing it leads, tries to
// place it, and the store refuses the write on A's epoch guard; A stops
// driving and waits for B's leadership to end before it campaigns again;
// B places everything.
func TestADeposedControlPlanesWriteIsRefused(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		register(t, s, testBroker(1), nil)
		register(t, s, testBroker(2), nil)
		frozen := store.NewManualClock(time.Now()) // A's clock: it never moves
		a := startController(t, s, "b1", frozen)
		synctest.Wait()
		if !a.Status().Leading {
			t.Fatal("A does not lead")
		}
		b := startController(t, s, "b2", nil)
		time.Sleep(testTTL) // the bubble's clock: A's lease ends at the store
		synctest.Wait()
		if !b.Status().Leading || !a.Status().Leading {
			t.Fatalf("after A's lease ended: A %+v, B %+v; want both to believe they lead", a.Status(), b.Status())
		}

		entry, err := NewCatalog(CatalogConfig{Store: s}).CreateStream(t.Context(), streamID("orders"), streamConfig(4, 1))
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		sa, sb := a.Status(), b.Status()
		if sa.Leading || sa.Deposed != 1 || !errors.Is(sa.LastEnd, errDeposed) || !errors.Is(sa.LastEnd, store.ErrNotLeader) {
			t.Fatalf("A after its write: %+v; want it deposed by the epoch guard", sa)
		}
		if !sb.Leading || sb.Epoch <= sa.Epoch {
			t.Fatalf("B %+v, A %+v: want B leading at a higher epoch", sb, sa)
		}
		stored := storedAssignments(t, s)
		for _, as := range stored {
			if as.Epoch != sb.Epoch || as.Assignment.Incarnation != entry.Incarnation {
				t.Fatalf("assignment %+v: want it written by B (epoch %d)", as, sb.Epoch)
			}
		}
		if len(stored) != 4 {
			t.Fatalf("%d assignments, want 4", len(stored))
		}
		candidates, _, err := s.Range(t.Context(), electionDir)
		if err != nil || len(candidates) != 1 || string(candidates[0].Value) != "b2" {
			t.Fatalf("candidates %v, %v: want B's alone, A waiting for it to go before campaigning again", candidates, err)
		}
	})
}

// TestAControlPlaneWhoseRenewalsGoUnansweredStops: A's renewals hang; one
// TTL after the last answered one was sent, A counts its lease lost and
// stops driving, before anything could tell it so; B leads.
func TestAControlPlaneWhoseRenewalsGoUnansweredStops(t *testing.T) {
	inBubble(t, func(t *testing.T, m *store.Memory) {
		hanging := &hangingStore{Store: m, release: make(chan struct{})}
		a := startController(t, hanging, "b1", nil)
		synctest.Wait()
		b := startController(t, m, "b2", nil)
		hanging.hang.Store(true)
		time.Sleep(testTTL)
		synctest.Wait()
		sa := a.Status()
		if sa.Leading || sa.Deposed != 1 || !errors.Is(sa.LastEnd, errLeaseLost) {
			t.Fatalf("A after a TTL of unanswered renewals: %+v", sa)
		}
		if sb := b.Status(); !sb.Leading || sb.Epoch <= sa.Epoch {
			t.Fatalf("B %+v: want it leading after A", sb)
		}
		hanging.hang.Store(false)
		close(hanging.release)
	})
}
