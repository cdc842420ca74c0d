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

// settle makes sure everything the broker sent so far was read: the answer
// to a request sent now comes after it on the same connection.
func settle(t *testing.T, c *Client) {
	t.Helper()
	if _, err := c.Publish(testCtx(t), testStream, []byte("settle")); err != nil {
		t.Fatal(err)
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
	want := []struct{ offset, missed uint64 }{{100, 0}, {101, 0}, {104, 2}, {105, 0}}
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
	if st := sub.Stats(); st.Delivered != 4 || st.Dropped != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestTheEndOfASubscriptionIsATypedError(t *testing.T) {
	cases := []struct {
		code     wire.Code
		sentinel error
		missed   *uint64
		resume   uint64
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
			var got []uint64
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
			if !errors.As(end, &se) || !errors.Is(end, tc.sentinel) || se.Code != tc.code || se.ResumeOffset != tc.resume {
				t.Fatalf("end %v (%+v), want %v resuming at %d", end, se, tc.code, tc.resume)
			}
			if (se.FirstMissedOffset == nil) != (tc.missed == nil) || (tc.missed != nil && *se.FirstMissedOffset != *tc.missed) {
				t.Fatalf("first missed offset %v, want %v", se.FirstMissedOffset, tc.missed)
			}
			if se.Stream != testStream || se.Shard != 3 {
				t.Fatalf("ended error names %v shard %d", se.Stream, se.Shard)
			}
		})
	}
}

func TestAConnectionDropEndsTheSubscriptionWithWhereToResume(t *testing.T) {
	b, _ := subscribeBroker(t, 100)
	c := dialFake(t, b)
	ctx := testCtx(t)
	sub, err := c.Subscribe(ctx, testStream, 0, SubscribeOptions{Start: FromEarliest()})
	if err != nil {
		t.Fatal(err)
	}
	fc := brokerConn(b)
	pushEvents(fc, 100, 101, 102)
	settle(t, c)
	_ = fc.nc.Close()
	var last uint64
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

func TestTheClientsQueueOverflowsByTheSubscriptionsPolicy(t *testing.T) {
	cases := []struct {
		policy   Overflow
		want     []uint64 // offsets delivered from the first five
		missed   []uint64
		dropped  uint64
		missed05 uint64 // Missed of offset 105, pushed after those were read
	}{
		{DropNew, []uint64{100, 101}, []uint64{0, 0}, 3, 3},
		{DropOld, []uint64{103, 104}, []uint64{3, 0}, 3, 0},
		{Disconnect, []uint64{100, 101}, []uint64{0, 0}, 0, 0},
	}
	for _, tc := range cases {
		t.Run(string(tc.policy.wire()), func(t *testing.T) {
			b, seen := subscribeBroker(t, 100)
			c := dialFake(t, b)
			ctx := testCtx(t)
			sub, err := c.Subscribe(ctx, testStream, 3, SubscribeOptions{Overflow: tc.policy, Buffer: 2})
			if err != nil {
				t.Fatal(err)
			}
			next(t, seen) // SUBSCRIBE
			fc := brokerConn(b)
			pushEvents(fc, 100, 101, 102, 103, 104)
			settle(t, c)
			for i, want := range tc.want {
				ev, err := sub.Next(ctx)
				if err != nil {
					t.Fatalf("event %d: %v", i, err)
				}
				if ev.Offset != want || ev.Missed != tc.missed[i] {
					t.Fatalf("event %d: offset %d missed %d, want %d and %d", i, ev.Offset, ev.Missed, want, tc.missed[i])
				}
			}
			if st := sub.Stats(); st.Dropped != tc.dropped {
				t.Fatalf("dropped %d, want %d", st.Dropped, tc.dropped)
			}
			if tc.policy == Disconnect {
				assertLocalDisconnect(t, sub, seen)
				return
			}
			pushEvents(fc, 105)
			if ev, err := sub.Next(ctx); err != nil || ev.Offset != 105 || ev.Missed != tc.missed05 {
				t.Fatalf("after the overflow: %+v %v, want 105 missing %d", ev, err, tc.missed05)
			}
		})
	}
}

func assertLocalDisconnect(t *testing.T, sub *Subscription, seen <-chan wire.Frame) {
	t.Helper()
	_, err := sub.Next(testCtx(t))
	var se *SubscriptionEndedError
	if !errors.As(err, &se) || !errors.Is(err, ErrSubscriberLagged) || se.FirstMissedOffset == nil || *se.FirstMissedOffset != 102 || se.ResumeOffset != 102 {
		t.Fatalf("end %v, want lagged at 102", err)
	}
	f := next(t, seen)
	if f.Type == wire.TypePublish { // the settling publish may come before or after
		f = next(t, seen)
	}
	var un wire.Unsubscribe
	if err := wire.DecodeControl(f, wire.Limits{}, &un); err != nil || un.SubscriptionID != testSubID {
		t.Fatalf("after a local disconnect the broker saw %v %+v (%v), want UNSUBSCRIBE", f.Type, un, err)
	}
}

func TestCloseUnsubscribesAndEndsTheReader(t *testing.T) {
	b, seen := subscribeBroker(t, 0)
	c := dialFake(t, b)
	ctx := testCtx(t)
	sub, err := c.Subscribe(ctx, testStream, 0, SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	next(t, seen) // SUBSCRIBE
	pushEvents(brokerConn(b), 0)
	settle(t, c)
	next(t, seen)
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.Next(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("Next after Close: %v", err)
	}
	f := next(t, seen)
	var un wire.Unsubscribe
	if err := wire.DecodeControl(f, wire.Limits{}, &un); err != nil || un.SubscriptionID != testSubID {
		t.Fatalf("broker saw %v (%v), want UNSUBSCRIBE %d", f.Type, err, testSubID)
	}
	if err := sub.Close(); err != nil {
		t.Fatal("closing twice:", err)
	}
	pushEvents(brokerConn(b), 1) // in flight after the close: ignored
	settle(t, c)
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
