package producer

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment/vfs"
)

// heldShards is an engine.Placement the test changes: the shards of sid
// this broker holds.
type heldShards struct {
	mu   sync.Mutex
	held []int
}

func (h *heldShards) Holds(id engine.StreamID, shard int) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return id == sid && slices.Contains(h.held, shard)
}

func (h *heldShards) set(shards ...int) {
	h.mu.Lock()
	h.held = shards
	h.mu.Unlock()
}

// A batch for a shard this broker leads (Ownership) but does not hold
// (Placement) is refused with *engine.NotLeaderError before the producer
// is even looked up: nothing is appended, and the producer's sequence
// there is untouched, so once the shard is held its batch 0 lands.
func TestABatchForAShardNotHeldIsRefusedAndChangesNothing(t *testing.T) {
	place := &heldShards{held: []int{0}}
	e, err := engine.Open(engine.Options{FS: vfs.NewMem(), Dir: "/data", Fsync: shardlog.OnCommit(), Placement: place})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CreateStream(sid, engine.StreamConfig{Shards: 2, Durable: true}); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, eng: e, m: New(e, Options{})}
	f.stream, _ = e.Stream(sid)
	id := f.register()
	key := keyOn(t, 1, 2)
	batch := []engine.Record{{Key: key, Value: []byte("a")}}
	w := newAckWaiter()
	err = f.m.Publish(id, f.stream, 1, 0, batch, w)
	var nl *engine.NotLeaderError
	if !errors.As(err, &nl) || nl.Shard != 1 || w.told() {
		t.Fatalf("a batch for a shard not held: %v (told %v)", err, w.told())
	}
	if err := f.m.Publish(unknownID(id), f.stream, 1, 0, batch, w); !errors.As(err, &nl) {
		t.Fatalf("an unknown producer's batch for a shard not held: %v; want the refusal asked first", err)
	}

	place.set(0, 1)
	if err := e.Reconcile(); err != nil {
		t.Fatal(err)
	}
	if a := f.send(id, 1, 0, batch); a.First != 0 || a.Count != 1 || a.Duplicate {
		t.Fatalf("batch 0 once the shard is held: %+v", a)
	}
	if got := f.records(1); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("shard 1 holds %v", got)
	}
}

// keyOn is a routing key that chooses shard of shards.
func keyOn(t *testing.T, shard, shards int) []byte {
	t.Helper()
	for i := range 1000 {
		if k := []byte{byte('a' + i%26), byte(i / 26)}; engine.ShardFor(k, shards) == shard {
			return k
		}
	}
	t.Fatalf("no key for shard %d", shard)
	return nil
}

// unknownID is an ID this broker never issued.
func unknownID(id ID) ID { return ID{Producer: id.Producer + 1000, Epoch: id.Epoch} }

// A shard released to another broker and held here again forgets its
// producers: a re-sent batch is unknown (its outcome the client must
// settle), never answered from memory of the log this broker held before,
// which the shard's leader meanwhile may have written past.
func TestAShardHeldAgainKnowsNoProducers(t *testing.T) {
	place := &heldShards{held: []int{0}}
	e, err := engine.Open(engine.Options{FS: vfs.NewMem(), Dir: "/data", Fsync: shardlog.OnCommit(), Placement: place})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CreateStream(sid, engine.StreamConfig{Shards: 1, Durable: true}); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, eng: e, m: New(e, Options{})}
	f.stream, _ = e.Stream(sid)
	id := f.register()
	batch := []engine.Record{{Value: []byte("a")}}
	if a := f.send(id, 0, 0, batch); a.Duplicate {
		t.Fatalf("batch 0: %+v", a)
	}
	if again := f.send(id, 0, 0, batch); !again.Duplicate {
		t.Fatalf("batch 0 re-sent while the shard is held: %+v, want it answered from memory", again)
	}
	place.set()
	if err := e.Reconcile(); err != nil {
		t.Fatal(err)
	}
	place.set(0)
	if err := e.Reconcile(); err != nil {
		t.Fatal(err)
	}
	err = f.m.Publish(id, f.stream, 0, 0, batch, newAckWaiter())
	if !errors.Is(err, ErrProducerUnknown) {
		t.Fatalf("batch 0 re-sent after the shard was released and held again: %v, want ErrProducerUnknown", err)
	}
	if got := f.records(0); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("shard 0 holds %v", got)
	}
}
