package group

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
)

// An idle consumer's poll waits, and a record published meanwhile ends the
// wait: no clock moves, so it was the shard's visibility that woke it.
func TestALongPollWakesOnANewRecord(t *testing.T) {
	f := newFixture(t, Options{})
	res := f.pollAsync(context.Background(), "g", "c1", time.Minute)
	f.clock.waitTimer(t)
	f.publish(2)
	r := receive(t, res)
	if r.err != nil || !slices.Equal(offsets(r.d), []int64{0, 1}) {
		t.Fatalf("woke with %v %v", offsets(r.d), r.err)
	}
}

// A waiting poll ends empty at its deadline, and at once when its context
// ends.
func TestALongPollEndsAtItsDeadlineOrItsContext(t *testing.T) {
	f := newFixture(t, Options{OwnershipRecheck: time.Hour})
	res := f.pollAsync(context.Background(), "g", "c1", time.Minute)
	f.clock.waitTimer(t)
	f.clock.advance(time.Minute)
	if r := receive(t, res); r.err != nil || len(r.d) != 0 {
		t.Fatalf("at the deadline: %v %v", offsets(r.d), r.err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	res = f.pollAsync(ctx, "g", "c1", time.Minute)
	f.clock.waitTimer(t)
	cancel()
	if r := receive(t, res); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled: %v", r.err)
	}
}

// Ownership is asked again while a poll waits: a shard that moves ends the
// wait with not-leader.
func TestALongPollEndsWhenTheShardMoves(t *testing.T) {
	f := newFixture(t, Options{OwnershipRecheck: time.Second})
	res := f.pollAsync(context.Background(), "g", "c1", time.Minute)
	f.clock.waitTimer(t)
	f.owner.set(false)
	f.clock.advance(time.Second)
	var nl *engine.NotLeaderError
	if r := receive(t, res); !errors.As(r.err, &nl) || nl.Leader != "b2:7000" {
		t.Fatalf("after the shard moved: %v", r.err)
	}
}

// A waiting poll is woken by a record becoming owed again: a claim that
// lapses, or another consumer's nack.
func TestALongPollWakesWhenARecordIsOwedAgain(t *testing.T) {
	f := newFixture(t, Options{Visibility: 10 * time.Second, OwnershipRecheck: time.Hour})
	f.publish(2)
	f.poll("g", "c1", 2)
	res := f.pollAsync(context.Background(), "g", "c2", time.Minute)
	f.clock.waitTimer(t)
	if err := f.m.Nack(key("g"), "c1", []int64{1}, 0); err != nil {
		t.Fatal(err)
	}
	if r := receive(t, res); r.err != nil || !slices.Equal(offsets(r.d), []int64{1}) {
		t.Fatalf("after a nack: %v %v", offsets(r.d), r.err)
	}
	f.ack("g", "c2", 1)
	res = f.pollAsync(context.Background(), "g", "c2", time.Minute)
	f.clock.waitTimer(t)
	f.clock.advance(10 * time.Second)
	if r := receive(t, res); r.err != nil || !slices.Equal(offsets(r.d), []int64{0}) || r.d[0].Deliveries != 2 {
		t.Fatalf("after a lapse: %+v %v", r.d, r.err)
	}
}

// Deleting the stream ends a waiting poll, and its groups go with it.
func TestDeletingTheStreamEndsWaitingPolls(t *testing.T) {
	f := newFixture(t, Options{})
	f.publish(1)
	f.poll("g", "c1", 1)
	res := f.pollAsync(context.Background(), "g", "c2", time.Minute)
	f.clock.waitTimer(t)
	if err := f.eng.DeleteStream(sid); err != nil {
		t.Fatal(err)
	}
	if r := receive(t, res); !errors.Is(r.err, engine.ErrStreamDeleted) {
		t.Fatalf("after the stream was deleted: %v", r.err)
	}
	if _, err := f.eng.CreateStream(sid, engine.StreamConfig{Durable: true}); err != nil {
		t.Fatal(err)
	}
	f.stream, _ = f.eng.Stream(sid)
	f.publish(1)
	if list, err := f.m.List(sid, 0); err != nil || len(list) != 0 {
		t.Fatalf("groups of the new stream: %+v %v", list, err)
	}
	if d := f.poll("g", "c1", 10); !slices.Equal(offsets(d), []int64{0}) || d[0].Deliveries != 1 {
		t.Fatalf("new stream: %+v", d)
	}
}

// Release (this broker stopped leading the shard) ends waiting polls and
// forgets the in-flight set; leading again rebuilds the groups from their
// logs, so the cursor stands and the unacked records are owed again.
func TestReleaseForgetsTheInFlightSetAndKeepsTheCursor(t *testing.T) {
	f := newFixture(t, Options{})
	f.publish(4)
	f.poll("g", "c1", 4)
	f.ack("g", "c1", 0, 1)
	res := f.pollAsync(context.Background(), "g", "c2", time.Minute)
	f.clock.waitTimer(t)
	f.owner.set(false)
	if err := f.m.Release(sid, 0); err != nil {
		t.Fatal(err)
	}
	var nl *engine.NotLeaderError
	if r := receive(t, res); !errors.As(r.err, &nl) {
		t.Fatalf("a poll waiting when the shard was released: %v", r.err)
	}
	f.owner.set(true)
	if got := f.poll("g", "c2", 10); !slices.Equal(offsets(got), []int64{2, 3}) || got[0].Deliveries != 1 {
		t.Fatalf("leading again: %+v", got)
	}
}
