package client

import (
	"errors"
	"testing"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

const testSubID = 7

// subscribeBroker answers SUBSCRIBE with SUBSCRIBED (id 7, first offset
// first), acks publishes and answers the rest with OK; the test pushes
// events through the returned connection.
func subscribeBroker(t *testing.T, first uint64) (*fakeBroker, <-chan wire.Frame) {
	ack := ackingHandler()
	b := newFakeBroker(t, func(fc *fakeConn, f wire.Frame) {
		if f.Type != wire.TypeSubscribe {
			ack(fc, f)
			return
		}
		fc.sendWith(func(dst []byte) []byte {
			return wire.AppendControl(dst, f.RequestID, &wire.Subscribed{SubscriptionID: testSubID, FirstOffset: first})
		})
	})
	return b, b.watch(64)
}

// brokerConn is the fake broker's side of the client's connection.
func brokerConn(b *fakeBroker) *fakeConn {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.conns[len(b.conns)-1]
}

func pushEvents(fc *fakeConn, offsets ...uint64) {
	evs := make([]wire.Event, len(offsets))
	for i, o := range offsets {
		evs[i] = wire.Event{Offset: o, Timestamp: int64(o) * 1000, Key: []byte("k"), Value: []byte{byte(o)}}
	}
	fc.sendWith(func(dst []byte) []byte { return wire.AppendEventBatch(dst, 0, testSubID, 3, evs) })
}

// settle makes sure the client read everything the broker sent on fc so
// far: it answers a PING sent now only after reading what came before.
func settle(t *testing.T, fc *fakeConn, seen <-chan wire.Frame) {
	t.Helper()
	id := uint64(time.Now().UnixNano())
	fc.sendWith(func(dst []byte) []byte { return wire.AppendPing(dst, id, 0) })
	for {
		if f := next(t, seen); f.Type == wire.TypePong && f.RequestID == id {
			return
		}
	}
}

func TestEventsCarryTheirOffsetsAndAGapIsExactlyADrop(t *testing.T) {
	b, seen := subscribeBroker(t, 100)
	c := dialFake(t, b)
	ctx := testCtx(t)
	sub, err := c.Subscribe(ctx, testStream, 3, SubscribeOptions{Start: FromOffset(100), QueueCapacity: 50, Overflow: DropOld})
	if err != nil {
		t.Fatal(err)
	}
	var req wire.Subscribe
	if err := wire.DecodeControl(next(t, seen), wire.Limits{}, &req); err != nil {
		t.Fatal(err)
	}
	if req.Shard != 3 || req.Start != (wire.Start{From: wire.StartOffset, Offset: 100}) || req.QueueCapacity != 50 || req.Overflow != wire.OverflowDropOld {
		t.Fatalf("SUBSCRIBE sent %+v", req)
	}
	if sub.FirstOffset() != 100 {
		t.Fatalf("first offset %d", sub.FirstOffset())
	}
	fc := brokerConn(b)
	pushEvents(fc, 100, 101)
	pushEvents(fc, 104, 105)
	want := []struct {
		offset int64
		missed uint64
	}{{100, 0}, {101, 0}, {104, 2}, {105, 0}}
	i := 0
	for ev, err := range sub.Events(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Offset != want[i].offset || ev.Missed != want[i].missed || ev.Shard != 3 ||
			string(ev.Key) != "k" || ev.Value[0] != byte(ev.Offset) || !ev.Timestamp.Equal(time.Unix(0, int64(ev.Offset)*1000)) {
			t.Fatalf("event %d: %+v, want offset %d missed %d", i, ev, want[i].offset, want[i].missed)
		}
		if i++; i == len(want) {
			break
		}
	}
	if st := sub.Stats(); st.Delivered != 4 || st.Queued != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestTheEndOfASubscriptionIsATypedError(t *testing.T) {
	cases := []struct {
		code     wire.Code
		sentinel error
		missed   *uint64
		resume   int64
	}{
		{wire.CodeSubscriberLagged, ErrSubscriberLagged, wire.U64(102), 102},
		{wire.CodeNotFound, ErrNotFound, nil, 102},
		{wire.CodeShuttingDown, ErrShuttingDown, nil, 102},
		{wire.CodeNotLeader, ErrNotLeader, nil, 102},
	}
	for _, tc := range cases {
		t.Run(tc.code.String(), func(t *testing.T) {
			b, _ := subscribeBroker(t, 100)
			c := dialFake(t, b)
			ctx := testCtx(t)
			sub, err := c.Subscribe(ctx, testStream, 3, SubscribeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			fc := brokerConn(b)
			pushEvents(fc, 100, 101)
			fc.sendWith(func(dst []byte) []byte {
				return wire.AppendControl(dst, 0, &wire.SubscriptionEnded{SubscriptionID: testSubID, Code: tc.code,
					Message: "ended", FirstMissedOffset: tc.missed})
			})
			var got []int64
			var end error
			for ev, err := range sub.Events(ctx) {
				if err != nil {
					end = err
					break
				}
				got = append(got, ev.Offset)
			}
			if len(got) != 2 {
				t.Fatalf("events before the end: %v", got)
			}
			var se *SubscriptionEndedError
			if !errors.As(end, &se) || !errors.Is(end, tc.sentinel) || se.Code != Code(tc.code) || se.ResumeOffset != tc.resume {
				t.Fatalf("end %v (%+v), want %v resuming at %d", end, se, tc.code, tc.resume)
			}
			if (se.FirstMissedOffset == nil) != (tc.missed == nil) || (tc.missed != nil && *se.FirstMissedOffset != int64(*tc.missed)) {
				t.Fatalf("first missed offset %v, want %v", se.FirstMissedOffset, tc.missed)
			}
			if se.Stream != testStream || se.Shard != 3 {
				t.Fatalf("ended error names %v shard %d", se.Stream, se.Shard)
			}
		})
	}
}

func TestAConnectionDropEndsTheSubscriptionWithWhereToResume(t *testing.T) {
	b, seen := subscribeBroker(t, 100)
	c := dialFake(t, b)
	ctx := testCtx(t)
	sub, err := c.Subscribe(ctx, testStream, 0, SubscribeOptions{Start: FromEarliest()})
	if err != nil {
		t.Fatal(err)
	}
	fc := brokerConn(b)
	pushEvents(fc, 100, 101, 102)
	settle(t, fc, seen)
	_ = fc.nc.Close()
	var last int64
	for ev, err := range sub.Events(ctx) {
		if err != nil {
			var se *SubscriptionEndedError
			if !errors.As(err, &se) || !errors.Is(err, ErrConnectionLost) || se.ResumeOffset != 103 || last != 102 {
				t.Fatalf("end %v after %d", err, last)
			}
			break
		}
		last = ev.Offset
	}
}

// A subscriber slower than its events holds back its own connection, not
// the client: with a buffer of 2, a burst of 5 is delivered whole (the
// connection stops reading meanwhile, so the broker would drop, not the
// client), and the client's other requests go on.
func TestASlowSubscriberHoldsBackOnlyItsOwnConnection(t *testing.T) {
	b, seen := subscribeBroker(t, 100)
	c := dialFake(t, b)
	ctx := testCtx(t)
	sub, err := c.Subscribe(ctx, testStream, 3, SubscribeOptions{Buffer: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if c.Stats().Subscriptions != 1 || b.connCount() != 2 {
		t.Fatalf("%d subscriptions over %d connections; a subscription has its own", c.Stats().Subscriptions, b.connCount())
	}
	next(t, seen) // SUBSCRIBE
	fc := brokerConn(b)
	pushEvents(fc, 100, 101, 102, 103, 104)
	if _, err := c.Publish(ctx, testStream, []byte("meanwhile")); err != nil {
		t.Fatal("a publish waited for a slow subscriber:", err)
	}
	for want := int64(100); want < 105; want++ {
		ev, err := sub.Next(ctx)
		if err != nil || ev.Offset != want || ev.Missed != 0 {
			t.Fatalf("event %+v %v, want %d with nothing missed", ev, err, want)
		}
	}
	settle(t, fc, seen) // the reader caught up and reads again
}

func TestCloseEndsTheReaderAndTheSubscriptionsConnection(t *testing.T) {
	b, seen := subscribeBroker(t, 0)
	c := dialFake(t, b)
	ctx := testCtx(t)
	sub, err := c.Subscribe(ctx, testStream, 0, SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fc := brokerConn(b)
	pushEvents(fc, 0)
	settle(t, fc, seen)
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.Next(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("Next after Close: %v", err)
	}
	select {
	case <-fc.done:
	case <-ctx.Done():
		t.Fatal("the subscription's connection stayed open after Close")
	}
	if err := sub.Close(); err != nil {
		t.Fatal("closing twice:", err)
	}
	if c.Stats().Subscriptions != 0 {
		t.Fatal("a closed subscription is still counted")
	}
	if _, err := c.Publish(ctx, testStream, []byte("v")); err != nil {
		t.Fatal("the client's own connection suffered:", err)
	}
}

func TestASubscribeRefusalIsAServerError(t *testing.T) {
	b := newFakeBroker(t, func(fc *fakeConn, f wire.Frame) {
		fc.fail(f.RequestID, wire.CodeOffsetBelowRetention, "retention passed it", wire.Details{Offset: wire.U64(50)})
	})
	c := dialFake(t, b)
	_, err := c.Subscribe(testCtx(t), testStream, 0, SubscribeOptions{Start: FromOffset(10)})
	var se *ServerError
	if !errors.Is(err, ErrOffsetBelowRetention) || !errors.As(err, &se) || *se.Details.Offset != 50 {
		t.Fatalf("got %v", err)
	}
}
