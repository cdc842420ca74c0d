package group

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
)

// Any durable stream serves groups, whatever its kind; two groups over one
// shard are independent and each sees every record.
func TestTwoGroupsEachSeeEveryRecord(t *testing.T) {
	f := newFixtureWith(t, Options{}, engine.StreamConfig{Durable: true, Kind: engine.KindStream})
	f.publish(10)
	a := f.poll("a", "c1", 100)
	f.ack("a", "c1", offsets(a)...)
	b := f.poll("b", "c1", 4)
	if !slices.Equal(offsets(a), span(0, 10)) || !slices.Equal(offsets(b), span(0, 4)) {
		t.Fatalf("group a got %v, group b %v", offsets(a), offsets(b))
	}
	if string(a[3].Value) != "v3" || a[3].Deliveries != 1 {
		t.Fatalf("delivery %+v", a[3])
	}
	if da, db := f.describe("a"), f.describe("b"); da.Cursor != 10 || db.Cursor != 0 || db.InFlight != 4 || db.Lag != 10 {
		t.Fatalf("a %+v\nb %+v", da, db)
	}
	list, err := f.m.List(sid, 0)
	if err != nil || len(list) != 2 || list[0].Key.Group != "a" || list[1].Key.Group != "b" {
		t.Fatalf("list %+v %v", list, err)
	}
}

// Two consumers race for one record: exactly one gets it while the claim
// stands.
func TestTwoConsumersRacingForOneRecordGetItOnce(t *testing.T) {
	f := newFixture(t, Options{})
	for round := range 50 {
		f.publish(1)
		got := make([][]Delivery, 2)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range got {
			wg.Go(func() {
				<-start
				got[i] = f.poll("g", []string{"c1", "c2"}[i], 10)
			})
		}
		close(start)
		wg.Wait()
		if len(got[0])+len(got[1]) != 1 {
			t.Fatalf("round %d: c1 got %v, c2 got %v", round, offsets(got[0]), offsets(got[1]))
		}
	}
}

// A slow consumer's claim lapses: the record goes to another, delivered a
// second time, and the slow one can neither extend nor ack it from under
// the new holder.
func TestAClaimLapsesWhileTheConsumerIsSlow(t *testing.T) {
	f := newFixture(t, Options{Visibility: 10 * time.Second})
	f.publish(3)
	slow := f.poll("g", "slow", 1)
	f.clock.advance(9 * time.Second)
	if d := f.poll("g", "fast", 10); !slices.Equal(offsets(d), []int64{1, 2}) {
		t.Fatalf("before the lapse the other consumer got %v", offsets(d))
	}
	f.clock.advance(time.Second)
	again := f.poll("g", "fast", 10)
	if len(again) != 1 || again[0].Offset != 0 || again[0].Deliveries != 2 || slow[0].Deliveries != 1 {
		t.Fatalf("after the lapse: %+v (first %+v)", again, slow[0])
	}
	if err := f.m.Extend(key("g"), "slow", []int64{0}, time.Minute); !errors.Is(err, ErrNotClaimed) {
		t.Fatalf("extend of a lapsed claim: %v", err)
	}
	var ce *ClaimError
	if err := f.m.Ack(key("g"), "slow", []int64{0}); !errors.As(err, &ce) || !slices.Equal(ce.Offsets, []int64{0}) ||
		ce.HeldBy[0] != "fast" || !strings.Contains(err.Error(), "[0] claimed by fast") {
		t.Fatalf("ack from under the new holder: %v, want it to name the holder", err)
	}
	f.ack("g", "fast", 0, 1, 2)
	if d := f.describe("g"); d.Cursor != 3 || d.Lapsed != 1 || d.InFlight != 0 || d.Redelivered != 1 {
		t.Fatalf("%+v", d)
	}
}

// A consumer that extends its claim keeps the record past the visibility
// timeout; a late ack, after a lapse nobody acted on, is still taken.
func TestExtendKeepsAClaimAndALateAckIsTaken(t *testing.T) {
	f := newFixture(t, Options{Visibility: 10 * time.Second})
	f.publish(2)
	f.poll("g", "c1", 2)
	f.clock.advance(8 * time.Second)
	if err := f.m.Extend(key("g"), "c1", []int64{0}, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	f.clock.advance(5 * time.Second) // record 1 lapsed, record 0 still held
	if d := f.poll("g", "c2", 10); !slices.Equal(offsets(d), []int64{1}) {
		t.Fatalf("c2 got %v", offsets(d))
	}
	f.ack("g", "c2", 1)
	f.clock.advance(10 * time.Second) // record 0 lapses too; nobody polls
	f.ack("g", "c1", 0)
	if d := f.poll("g", "c2", 10); len(d) != 0 {
		t.Fatalf("an acked record was delivered again: %v", offsets(d))
	}
}

// A nack makes a record owed again, after its delay.
func TestANackRedeliversAfterItsDelay(t *testing.T) {
	f := newFixture(t, Options{})
	f.publish(2)
	f.poll("g", "c1", 2)
	if err := f.m.Nack(key("g"), "c1", []int64{0}, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.m.Nack(key("g"), "c1", []int64{1}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if d := f.poll("g", "c2", 10); !slices.Equal(offsets(d), []int64{0}) || d[0].Deliveries != 2 {
		t.Fatalf("after the nacks: %+v", d)
	}
	f.ack("g", "c2", 0)
	f.clock.advance(59 * time.Second)
	if d := f.poll("g", "c2", 10); len(d) != 0 {
		t.Fatalf("before the delay: %v", offsets(d))
	}
	f.clock.advance(time.Second)
	if d := f.poll("g", "c2", 10); !slices.Equal(offsets(d), []int64{1}) {
		t.Fatalf("after the delay: %v", offsets(d))
	}
	if err := f.m.Nack(key("g"), "c1", []int64{1}, 0); !errors.Is(err, ErrNotClaimed) {
		t.Fatalf("nack by a consumer that no longer holds it: %v", err)
	}
}

// The cursor moves only over a contiguous run of acks: an unacked record
// holds it, and after a restart everything from there is delivered again.
func TestTheCursorRefusesToPassAnUnackedRecord(t *testing.T) {
	f := newFixture(t, Options{})
	f.publish(5)
	f.poll("g", "c1", 5)
	f.ack("g", "c1", 0, 2, 3, 4)
	if d := f.describe("g"); d.Cursor != 1 || d.InFlight != 1 {
		t.Fatalf("with record 1 unacked: %+v", d)
	}
	f.restart()
	if d := f.describe("g"); d.Cursor != 1 {
		t.Fatalf("after a restart the cursor is %d", d.Cursor)
	}
	got := f.poll("g", "c1", 10)
	if !slices.Equal(offsets(got), span(1, 5)) {
		t.Fatalf("after a restart got %v", offsets(got))
	}
	f.ack("g", "c1", 1)
	if d := f.describe("g"); d.Cursor != 2 {
		t.Fatalf("cursor %d", d.Cursor)
	}
}

// The in-flight set is not durable: a restart delivers it again, while
// what was acked contiguously stays done.
func TestARestartRedeliversTheInFlightSet(t *testing.T) {
	f := newFixture(t, Options{})
	f.publish(10)
	f.poll("g", "c1", 10)
	f.ack("g", "c1", span(0, 6)...)
	f.restart()
	got := f.poll("g", "c2", 100)
	if !slices.Equal(offsets(got), span(6, 10)) || got[0].Deliveries != 1 {
		t.Fatalf("after a restart: %+v", got)
	}
}

// A group reads any durable stream; a stream in memory, or a shard this
// broker does not lead, is refused.
func TestGroupsNeedADurableShardAndItsLeader(t *testing.T) {
	f := newFixture(t, Options{})
	mem := engine.StreamID{Tenant: "acme", Namespace: "orders", Name: "mem"}
	if _, err := f.eng.CreateStream(mem, engine.StreamConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.m.Poll(context.Background(), PollRequest{Key: Key{Stream: mem, Group: "g"}, Consumer: "c", Max: 1}); !errors.Is(err, ErrNotDurable) {
		t.Fatalf("stream in memory: %v", err)
	}
	f.owner.set(false)
	var nl *engine.NotLeaderError
	if _, err := f.m.Poll(context.Background(), PollRequest{Key: key("g"), Consumer: "c", Max: 1}); !errors.As(err, &nl) || nl.Leader != "b2:7000" {
		t.Fatalf("not the leader: %v", err)
	}
	if err := f.m.Ack(key("g"), "c", []int64{0}); !errors.As(err, &nl) {
		t.Fatalf("ack at a non-leader: %v", err)
	}
}
