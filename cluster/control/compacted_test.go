package control

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/felixbroker/felix/cluster/store"
)

// pausingStore can pause its watches: a paused watch's Next reads nothing
// from the store (its cursor stays where it was) until resumed, as a
// broker that falls behind does. It counts Ranges.
type pausingStore struct {
	countingStore
	mu     sync.Mutex
	paused bool
	change context.Context // cancelled at the next pause or resume
	next   context.CancelFunc
}

func newPausingStore(s store.Store) *pausingStore {
	p := &pausingStore{countingStore: countingStore{Store: s}}
	p.change, p.next = context.WithCancel(context.Background())
	return p
}

func (p *pausingStore) setPaused(paused bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paused = paused
	p.next()
	p.change, p.next = context.WithCancel(context.Background())
}

func (p *pausingStore) state() (bool, context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paused, p.change
}

func (p *pausingStore) Watch(ctx context.Context, prefix string, fromRev int64) (store.Watch, error) {
	w, err := p.Store.Watch(ctx, prefix, fromRev)
	if err != nil {
		return nil, err
	}
	return &pausableWatch{Watch: w, store: p}, nil
}

type pausableWatch struct {
	store.Watch
	store *pausingStore
}

func (w *pausableWatch) Next(ctx context.Context) ([]store.Event, error) {
	for {
		paused, change := w.store.state()
		if paused {
			select {
			case <-change.Done():
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		inner, cancel := context.WithCancel(ctx)
		stop := context.AfterFunc(change, cancel)
		events, err := w.Watch.Next(inner)
		stop()
		cancel()
		if err != nil && ctx.Err() == nil && change.Err() != nil {
			continue // interrupted by a pause: the watch goes on from its cursor
		}
		return events, err
	}
}

// TestAWatchBehindACompactionResyncs: the control plane's and a view's
// watches fall behind while a broker joins and a stream is created; the
// history is compacted, so their watches end with ErrCompacted. Both read
// the state again: the stream is placed (on the broker that joined too)
// and the view sees it.
func TestAWatchBehindACompactionResyncs(t *testing.T) {
	inBubble(t, func(t *testing.T, m *store.Memory) {
		s := newPausingStore(m)
		register(t, m, testBroker(1), nil)
		c := startController(t, s, "b1", nil)
		v := startView(t, s, testBroker(1))
		synctest.Wait()
		ranges := s.ranges.Load()

		s.setPaused(true)
		synctest.Wait()
		register(t, m, testBroker(2), nil)
		entry := createUnawaited(t, m, "orders", 4)
		compactAll(t, m)
		s.setPaused(false)
		synctest.Wait()

		if n := s.ranges.Load() - ranges; n != 2 {
			t.Fatalf("%d Ranges after the compaction, want one each for the control plane and the view", n)
		}
		if st := c.Status(); st.Terms != 1 || !st.Leading {
			t.Fatalf("the control plane %+v: want it still in its first term", st)
		}
		stored := storedAssignments(t, m)
		if n := leadersOf(stored); len(stored) != 4 || n["b1"] != 2 || n["b2"] != 2 {
			t.Fatalf("after the resync: leaders %v of %d shards, want 2 on each broker", n, len(stored))
		}
		st := v.Status()
		if len(st.Shards) != 4 || len(st.Brokers) != 2 || len(st.Objects) != 1 ||
			st.Objects[0].Incarnation != entry.Incarnation {
			t.Fatalf("the view after its resync: %+v", st)
		}
	})
}

// createUnawaited writes a stream's catalog entry without waiting.
func createUnawaited(t *testing.T, s store.Store, name string, shards int) Entry {
	t.Helper()
	cfg := streamConfig(shards, 1)
	e := Entry{Object: objectOf(streamID(name)), Stream: &cfg}
	res, err := s.Txn(t.Context(), store.Txn{Then: []store.Op{store.Put(CatalogKey(e.Object), encodeEntry(e))}})
	if err != nil {
		t.Fatal(err)
	}
	e.Incarnation = res.Revision
	return e
}

func compactAll(t *testing.T, s store.Store) {
	t.Helper()
	_, rev, err := s.Get(t.Context(), Root)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(t.Context(), rev); err != nil {
		t.Fatal(err)
	}
}
