package control

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/felixbroker/felix/cluster"
	"github.com/felixbroker/felix/cluster/store"
)

// TestAwaitObjectWaitsForTheEntryThenItsPlacement: AwaitObject answers
// once the view has the entry, and with placed once every shard is
// assigned for that incarnation; it ends with its ctx, and with the view.
func TestAwaitObjectWaitsForTheEntryThenItsPlacement(t *testing.T) {
	inBubble(t, func(t *testing.T, s *store.Memory) {
		v := startView(t, s, testBroker(1))
		id := objectOf(streamID("orders"))
		placed := make(chan error, 1)
		go func() {
			_, err := v.AwaitObject(t.Context(), id, true)
			placed <- err
		}()
		e := createUnawaited(t, s, "orders", 2)
		if got, err := v.AwaitObject(t.Context(), id, false); err != nil || got.Incarnation != e.Incarnation {
			t.Fatalf("AwaitObject: %+v, %v; want incarnation %d", got, err, e.Incarnation)
		}
		assign(t, s, cluster.ShardID{Object: id, Shard: 0}, testBroker(1).Replica(), e.Incarnation)
		synctest.Wait()
		select {
		case err := <-placed:
			t.Fatalf("AwaitObject placed returned with one shard of two assigned: %v", err)
		default:
		}
		assign(t, s, cluster.ShardID{Object: id, Shard: 1}, testBroker(1).Replica(), e.Incarnation)
		if err := <-placed; err != nil {
			t.Fatal(err)
		}

		other := objectOf(streamID("none"))
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if _, err := v.AwaitObject(ctx, other, false); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("AwaitObject of an object never created: %v, want the ctx's deadline", err)
		}
		v.Close()
		if _, err := v.AwaitObject(t.Context(), other, false); !errors.Is(err, ErrClosed) {
			t.Fatalf("AwaitObject on a closed view: %v, want ErrClosed", err)
		}
		if _, err := v.AwaitObject(t.Context(), id, true); err != nil {
			t.Fatalf("AwaitObject on a closed view of what it holds: %v", err)
		}
	})
}
