package e2e

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/group"
	"github.com/felixbroker/felix/engine/shardlog"
)

// groupFixture is a queue broker on a fake clock, a client, and a durable
// single-shard stream named after the test.
type groupFixture struct {
	b      *queueBroker
	clk    *fakeClock
	c      *client.Client
	stream client.Stream
}

func newGroupFixture(t *testing.T, gopts group.Options) *groupFixture {
	t.Helper()
	clk := newFakeClock()
	gopts.Clock = clk
	b := startQueueBroker(t, engine.Options{}, gopts)
	c := b.dial(t)
	return &groupFixture{b: b, clk: clk, c: c, stream: createStream(t, c, client.StreamConfig{Shards: 1})}
}

// publish appends n records, "r0", "r1", ..., and returns nothing until
// they are acknowledged.
func (f *groupFixture) publish(t *testing.T, from, n int) {
	t.Helper()
	recs := make([]client.Record, n)
	for i := range recs {
		recs[i] = client.Record{Value: fmt.Appendf(nil, "r%d", from+i)}
	}
	if _, err := f.c.PublishBatch(testCtx(t), f.stream, recs); err != nil {
		t.Fatal(err)
	}
}

func offsetsOf(ms []client.Message) []int64 {
	out := make([]int64, len(ms))
	for i, m := range ms {
		out[i] = m.Offset
	}
	return out
}

func poll(t *testing.T, g *client.Group, max int) []client.Message {
	t.Helper()
	ms, err := g.Poll(testCtx(t), max, 0)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func describe(t *testing.T, g *client.Group) client.GroupInfo {
	t.Helper()
	info, err := g.Describe(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// A record claimed by one consumer is not handed to another while the
// claim stands; the holder's ack finishes it and moves the cursor.
func TestAClaimedRecordGoesToOneConsumerOverTheWire(t *testing.T) {
	f := newGroupFixture(t, group.Options{})
	f.publish(t, 0, 3)
	a := f.c.Group(f.stream, 0, "billing", client.WithConsumer("a"))
	b := f.c.Group(f.stream, 0, "billing", client.WithConsumer("b"))
	got := poll(t, a, 10)
	if !slices.Equal(offsetsOf(got), []int64{0, 1, 2}) || string(got[1].Value) != "r1" || got[0].Deliveries != 1 {
		t.Fatalf("a's poll: %+v", got)
	}
	if more := poll(t, b, 10); len(more) != 0 {
		t.Fatalf("b was handed claimed records: %v", offsetsOf(more))
	}
	var ce *client.ClaimError
	if err := b.Ack(testCtx(t), 0); !errors.As(err, &ce) || !errors.Is(err, client.ErrClaimNotHeld) || ce.Applied != 0 {
		t.Fatalf("b acked a's claim: %v", err)
	}
	if err := a.Ack(testCtx(t), 0, 1, 2); err != nil {
		t.Fatal(err)
	}
	if info := describe(t, a); info.Cursor != 3 || info.InFlight != 0 || info.Lag != 0 {
		t.Fatalf("after the acks: %+v", info)
	}
}

// Two consumers polling at once, each over its own connection, are handed
// every record exactly once between them.
func TestTwoConsumersRacingShareEveryRecordOnce(t *testing.T) {
	f := newGroupFixture(t, group.Options{})
	const n = 400
	f.publish(t, 0, n)
	var mu sync.Mutex
	seen := map[int64]string{}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, name := range []string{"left", "right"} {
		c := f.b.dial(t)
		g := c.Group(f.stream, 0, "race", client.WithConsumer(name))
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- drain(t, g, name, &mu, seen, n)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != n {
		t.Fatalf("%d of %d records handed out", len(seen), n)
	}
}

// drain polls and acks until the group has handed out n records in all;
// a record handed out twice is an error.
func drain(t *testing.T, g *client.Group, name string, mu *sync.Mutex, seen map[int64]string, n int) error {
	ctx := testCtx(t)
	for {
		mu.Lock()
		done := len(seen) >= n
		mu.Unlock()
		if done {
			return nil
		}
		ms, err := g.Poll(ctx, 7, 0)
		if err != nil {
			return err
		}
		mu.Lock()
		for _, m := range ms {
			if other, ok := seen[m.Offset]; ok {
				mu.Unlock()
				return fmt.Errorf("offset %d handed to %s and %s", m.Offset, other, name)
			}
			seen[m.Offset] = name
		}
		mu.Unlock()
		if err := g.Ack(ctx, offsetsOf(ms)...); err != nil {
			return err
		}
	}
}

// A claim that lapses makes its record owed again, to any consumer, with
// its delivery count up; the first holder's ack then misses.
func TestALapsedClaimIsHandedOutAgainOverTheWire(t *testing.T) {
	f := newGroupFixture(t, group.Options{})
	f.publish(t, 0, 1)
	a := f.c.Group(f.stream, 0, "g", client.WithConsumer("a"), client.WithClaim(5*time.Second))
	b := f.c.Group(f.stream, 0, "g", client.WithConsumer("b"))
	if got := poll(t, a, 1); len(got) != 1 {
		t.Fatalf("a: %+v", got)
	}
	f.clk.advance(4 * time.Second)
	if got := poll(t, b, 1); len(got) != 0 {
		t.Fatal("the claim lapsed early")
	}
	f.clk.advance(2 * time.Second)
	got := poll(t, b, 1)
	if len(got) != 1 || got[0].Offset != 0 || got[0].Deliveries != 2 {
		t.Fatalf("b after the lapse: %+v", got)
	}
	if err := a.Ack(testCtx(t), 0); !errors.Is(err, client.ErrClaimNotHeld) {
		t.Fatalf("a's ack after b took the record: %v", err)
	}
	if info := describe(t, a); info.Lapsed != 1 || info.Redelivered != 1 || info.InFlight != 1 {
		t.Fatalf("describe: %+v", info)
	}
}

// A nack with a delay gives the record back, owed once the delay ends.
func TestANackWithADelayRedeliversAfterItOverTheWire(t *testing.T) {
	f := newGroupFixture(t, group.Options{})
	f.publish(t, 0, 2)
	g := f.c.Group(f.stream, 0, "g")
	if got := poll(t, g, 1); len(got) != 1 || got[0].Offset != 0 {
		t.Fatalf("first poll: %+v", got)
	}
	if err := g.Nack(testCtx(t), 10*time.Second, 0); err != nil {
		t.Fatal(err)
	}
	if got := poll(t, g, 5); !slices.Equal(offsetsOf(got), []int64{1}) {
		t.Fatalf("during the delay: %v", offsetsOf(got))
	}
	if info := describe(t, g); info.Owed != 1 || info.Nacked != 1 {
		t.Fatalf("describe during the delay: %+v", info)
	}
	f.clk.advance(10 * time.Second)
	got := poll(t, g, 5)
	if len(got) != 1 || got[0].Offset != 0 || got[0].Deliveries != 2 {
		t.Fatalf("after the delay: %+v", got)
	}
}

// The cursor moves only over a contiguous run of acks: a record nobody
// finished holds it, however many after it were acked.
func TestTheCursorNeverPassesAGapOverTheWire(t *testing.T) {
	f := newGroupFixture(t, group.Options{})
	f.publish(t, 0, 4)
	g := f.c.Group(f.stream, 0, "g")
	poll(t, g, 4)
	if err := g.Ack(testCtx(t), 0, 2, 3); err != nil {
		t.Fatal(err)
	}
	if info := describe(t, g); info.Cursor != 1 || info.InFlight != 1 || info.Lag != 3 {
		t.Fatalf("with offset 1 unfinished: %+v", info)
	}
	if err := g.Ack(testCtx(t), 1); err != nil {
		t.Fatal(err)
	}
	if info := describe(t, g); info.Cursor != 4 || info.Lag != 0 {
		t.Fatalf("with the gap filled: %+v", info)
	}
}

// The in-flight set is not durable: after a restart the group resumes from
// its cursor and hands out again what was claimed and not acked.
func TestARestartRedeliversTheInFlightSetOverTheWire(t *testing.T) {
	f := newGroupFixture(t, group.Options{})
	f.publish(t, 0, 3)
	g := f.c.Group(f.stream, 0, "g")
	poll(t, g, 3)
	if err := g.Ack(testCtx(t), 0); err != nil {
		t.Fatal(err)
	}
	f.b.restart()
	// The same Group: its client dials the broker again once it knows the
	// old connection is gone. A call made before the client has read the
	// stopped broker's close fails with ErrConnectionLost; the next dials.
	got, err := g.Poll(testCtx(t), 10, 0)
	if errors.Is(err, client.ErrConnectionLost) {
		got, err = g.Poll(testCtx(t), 10, 0)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(offsetsOf(got), []int64{1, 2}) || got[0].Deliveries != 1 {
		t.Fatalf("after the restart: %+v", got)
	}
	if info := describe(t, g); info.Cursor != 1 {
		t.Fatalf("the cursor after the restart: %+v", info)
	}
}

// A record delivered its most times and nacked is dead-lettered: listed,
// counted, passed by the cursor, and handed out again once redriven.
func TestDeadLettersAndRedriveOverTheWire(t *testing.T) {
	f := newGroupFixture(t, group.Options{MaxDeliveries: 2})
	f.publish(t, 0, 2)
	g := f.c.Group(f.stream, 0, "g")
	ctx := testCtx(t)
	for range 2 {
		got := poll(t, g, 1)
		if len(got) != 1 || got[0].Offset != 0 {
			t.Fatalf("poll: %+v", got)
		}
		if err := g.Nack(ctx, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	if got := poll(t, g, 5); !slices.Equal(offsetsOf(got), []int64{1}) {
		t.Fatalf("after the dead letter: %v", offsetsOf(got))
	}
	if err := g.Ack(ctx, 1); err != nil {
		t.Fatal(err)
	}
	dead, more, err := g.DeadLetters(ctx, nil, 0)
	if err != nil || more || len(dead) != 1 || dead[0].Offset != 0 || dead[0].Deliveries != 2 || dead[0].Reason == "" || dead[0].At.IsZero() {
		t.Fatalf("dead letters: %+v, more %v, %v", dead, more, err)
	}
	if info := describe(t, g); info.DeadLetters != 1 || info.DeadLettered != 1 || info.Cursor != 2 {
		t.Fatalf("describe: %+v", info)
	}
	n, notDead, err := g.Redrive(ctx)
	if err != nil || n != 1 || len(notDead) != 0 {
		t.Fatalf("redrive: %d, %v, %v", n, notDead, err)
	}
	got := poll(t, g, 5)
	if len(got) != 1 || got[0].Offset != 0 || got[0].Deliveries != 1 {
		t.Fatalf("the redriven record: %+v", got)
	}
	if dead, _, _ := g.DeadLetters(ctx, nil, 0); len(dead) != 0 {
		t.Fatalf("still dead after the redrive: %+v", dead)
	}
}

// A waiting poll is answered as soon as a record is published.
func TestALongPollIsWokenByAPublish(t *testing.T) {
	f := newGroupFixture(t, group.Options{})
	g := f.c.Group(f.stream, 0, "g")
	got := make(chan []client.Message, 1)
	go func() {
		ms, err := g.Poll(testCtx(t), 10, time.Minute)
		if err != nil {
			t.Error(err)
		}
		got <- ms
	}()
	f.clk.waitSleeper(t) // the poll found nothing and went to sleep
	f.publish(t, 0, 1)
	select {
	case ms := <-got:
		if len(ms) != 1 || string(ms[0].Value) != "r0" {
			t.Fatalf("woken poll: %+v", ms)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the publish did not wake the poll")
	}
}

// A shard that moves to another broker while a poll waits ends the wait
// with not_leader, rather than being served by its former owner.
func TestAWaitingPollEndsWhenTheShardMoves(t *testing.T) {
	clk, owner := newFakeClock(), &switchOwner{}
	b := startQueueBroker(t, engine.Options{Owner: owner}, group.Options{Clock: clk, OwnershipRecheck: time.Second})
	c := b.dial(t)
	s := createStream(t, c, client.StreamConfig{Shards: 1})
	g := c.Group(s, 0, "g")
	done := make(chan error, 1)
	go func() {
		_, err := g.Poll(testCtx(t), 1, time.Minute)
		done <- err
	}()
	clk.waitSleeper(t)
	owner.remote.Store(true)
	clk.advance(time.Second) // the recheck
	select {
	case err := <-done:
		var se *client.ServerError
		if !errors.Is(err, client.ErrNotLeader) || !errors.As(err, &se) || se.Details.LeaderAddr != "10.0.0.9:7117" {
			t.Fatalf("want not_leader naming the new leader, got %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the poll kept waiting on a shard this broker no longer leads")
	}
}

// Describe reports each field, retention's skips included: records
// retention removed before the group reached them are counted, and the
// group moves past them.
func TestDescribeReportsRetentionSkipsOverTheWire(t *testing.T) {
	clk := newFakeClock()
	b := startQueueBroker(t, engine.Options{SegmentBytes: 4 << 10, Retention: shardlog.Retention{MaxBytes: 8 << 10}},
		group.Options{Clock: clk})
	c := b.dial(t)
	s := createStream(t, c, client.StreamConfig{Shards: 1})
	g := c.Group(s, 0, "slow")
	if got := poll(t, g, 1); len(got) != 0 { // creates the group at offset 0
		t.Fatalf("an empty stream handed out %v", offsetsOf(got))
	}
	value := make([]byte, 200)
	for range 200 {
		if _, err := c.Publish(testCtx(t), s, value); err != nil {
			t.Fatal(err)
		}
	}
	// Retention runs every few seconds on its own; run it now instead of
	// waiting for it (the broker's own code path, nothing checked here).
	st, err := b.eng.Stream(engine.StreamID{Tenant: s.Tenant, Namespace: s.Namespace, Name: s.Name})
	if err != nil {
		t.Fatal(err)
	}
	sh, _ := st.Shard(0)
	sh.ApplyRetention()
	info, err := c.DescribeStream(testCtx(t), s)
	if err != nil {
		t.Fatal(err)
	}
	first := info.Shards[0].FirstOffset
	if first == 0 {
		t.Fatal("retention removed nothing; the test needs it to")
	}
	gi := describe(t, g)
	if gi.RetentionSkipped != uint64(first) || gi.Cursor != first || gi.EndOffset != 200 || gi.Lag != uint64(200-first) || gi.NextOffset != first {
		t.Fatalf("describe after retention removed %d records: %+v", first, gi)
	}
	names, err := c.ListGroups(testCtx(t), s, 0)
	if err != nil || !slices.Equal(names, []string{"slow"}) {
		t.Fatalf("list: %v, %v", names, err)
	}
}

// An ack sent without waiting is applied like Ack, and reports the same:
// a claim another consumer holds is not acked.
func TestAnAsyncAckIsAppliedLikeAnAck(t *testing.T) {
	f := newGroupFixture(t, group.Options{})
	f.publish(t, 0, 3)
	a := f.c.Group(f.stream, 0, "g", client.WithConsumer("a"))
	b := f.c.Group(f.stream, 0, "g", client.WithConsumer("b"))
	poll(t, a, 2)
	poll(t, b, 1)
	mine := a.AckAsync(testCtx(t), 0, 1)
	theirs := a.AckAsync(testCtx(t), 2)
	if err := mine.Wait(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	var ce *client.ClaimError
	if err := theirs.Wait(testCtx(t)); !errors.As(err, &ce) || len(ce.NotHeld) != 1 || ce.NotHeld[0] != 2 {
		t.Fatalf("an async ack of b's claim: %v", err)
	}
	if err := theirs.Wait(testCtx(t)); !errors.Is(err, client.ErrClaimNotHeld) {
		t.Fatalf("a second wait: %v", err)
	}
	if info := describe(t, a); info.Cursor != 2 || info.Acked != 2 {
		t.Fatalf("describe: %+v", info)
	}
}
