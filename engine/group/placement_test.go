package group

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

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

// A group on a shard this broker does not hold answers *NotLeaderError,
// and releasing it is a no-op. When Reconcile moves a held shard away, a
// poll waiting there ends naming the leader; held and led again, its
// groups are rebuilt from their logs: the cursor stands, the claims in
// flight are owed again.
func TestAGroupOnAShardNotHeldHereIsRefused(t *testing.T) {
	place, owner, clock := &heldShards{held: []int{0}}, &switchOwner{local: true}, newFakeClock()
	e, err := engine.Open(engine.Options{FS: vfs.NewMem(), Dir: "/data", Fsync: shardlog.OnCommit(),
		Placement: place, Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CreateStream(sid, engine.StreamConfig{Shards: 2, Durable: true}); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, clock: clock, owner: owner, eng: e, m: New(e, Options{Clock: clock})}
	f.stream, _ = e.Stream(sid)
	defer f.m.Close()

	var nl *engine.NotLeaderError
	_, err = f.m.Poll(context.Background(), PollRequest{Key: Key{Stream: sid, Shard: 1, Group: "g"}, Consumer: "c1", Max: 1})
	if !errors.As(err, &nl) || nl.Shard != 1 {
		t.Fatalf("a poll on a shard not held: %v", err)
	}
	if err := f.m.Release(sid, 1); err != nil {
		t.Fatalf("releasing a shard not held: %v", err)
	}

	f.publish(4)
	f.poll("g", "c1", 4)
	f.ack("g", "c1", 0, 1)
	res := f.pollAsync(context.Background(), "g", "c2", time.Minute)
	f.clock.waitTimer(t)
	owner.set(false)
	place.set()
	if err := e.Reconcile(); err != nil {
		t.Fatal(err)
	}
	if r := receive(t, res); !errors.As(r.err, &nl) || nl.Leader != "b2:7000" {
		t.Fatalf("a poll waiting when the shard moved away: %v", r.err)
	}
	_, err = f.m.Poll(context.Background(), PollRequest{Key: key("g"), Consumer: "c2", Max: 1})
	if !errors.As(err, &nl) {
		t.Fatalf("a poll after the shard moved away: %v", err)
	}

	owner.set(true)
	place.set(0)
	if err := e.Reconcile(); err != nil {
		t.Fatal(err)
	}
	if got := f.poll("g", "c2", 10); !slices.Equal(offsets(got), []int64{2, 3}) || got[0].Deliveries != 1 {
		t.Fatalf("held again: %+v", got)
	}
}
