package client

import (
	"errors"
	"testing"

	"github.com/felixbroker/felix/netio/wire"
)

// pushMixed pushes one batch of records and, at the offsets in control,
// control events (EventFlagControl, no key, no value).
func pushMixed(fc *fakeConn, offsets []uint64, control map[uint64]bool) {
	evs := make([]wire.Event, len(offsets))
	for i, o := range offsets {
		evs[i] = wire.Event{Offset: o, Timestamp: int64(o) * 1000, Key: []byte("k"), Value: []byte{byte(o)}}
		if control[o] {
			evs[i] = wire.Event{Offset: o, Timestamp: int64(o), Flags: wire.EventFlagControl | 0x0008}
		}
	}
	fc.sendWith(func(dst []byte) []byte { return wire.AppendEventBatch(dst, 0, testSubID, 3, evs) })
}

// A client that offered control_events (it does by default) passes the
// offsets the broker says hold no record without handing them over or
// counting them missed; a drop just before one is counted on the next
// event, and ResumeOffset passes a control offset at the end; with the
// default read-ahead and with one of a single event, which a control
// offset fills as a record does.
func TestAControlOffsetIsNeitherAnEventNorMissed(t *testing.T) {
	for _, buffer := range []int{0, 1} {
		controlOffsets(t, buffer)
	}
}

func controlOffsets(t *testing.T, buffer int) {
	b, seen := subscribeBroker(t, 0)
	c := dialFake(t, b)
	if !DefaultFeatures.Has(FeatureControlEvents) || !b.lastHello().Features.Has(wire.FeatureControlEvents) {
		t.Fatalf("HELLO offered %v, want control_events in it", b.lastHello().Features)
	}
	ctx := testCtx(t)
	sub, err := c.Subscribe(ctx, testStream, 3, SubscribeOptions{Start: FromEarliest(), Buffer: buffer})
	if err != nil {
		t.Fatal(err)
	}
	next(t, seen) // the SUBSCRIBE
	fc := brokerConn(b)
	// 0 control; 1, 2; 3 dropped; 4 control; 5; 6 dropped; 7 control; 8 dropped; 9; 10 control.
	control := map[uint64]bool{0: true, 4: true, 7: true, 10: true}
	pushMixed(fc, []uint64{0, 1, 2}, control)
	pushMixed(fc, []uint64{4, 5, 7}, control)
	pushMixed(fc, []uint64{9, 10}, control)
	fc.sendWith(func(dst []byte) []byte {
		return wire.AppendControl(dst, 0, &wire.SubscriptionEnded{SubscriptionID: testSubID, Code: wire.CodeShuttingDown, Message: "bye"})
	})
	want := []struct {
		offset int64
		missed uint64
	}{{1, 0}, {2, 0}, {5, 1}, {9, 2}}
	var got []Event
	var end error
	for ev, err := range sub.Events(ctx) {
		if err != nil {
			end = err
			break
		}
		got = append(got, ev)
	}
	if len(got) != len(want) {
		t.Fatalf("events %+v, want offsets %v", got, want)
	}
	for i, ev := range got {
		if ev.Offset != want[i].offset || ev.Missed != want[i].missed || string(ev.Key) != "k" {
			t.Fatalf("buffer %d, event %d: %+v, want offset %d missed %d", buffer, i, ev, want[i].offset, want[i].missed)
		}
	}
	var se *SubscriptionEndedError
	if !errors.As(end, &se) || se.ResumeOffset != 11 {
		t.Fatalf("end %v, want resume at 11 (past the control offset 10)", end)
	}
	if st := sub.Stats(); st.Delivered != 4 || st.Queued != 0 {
		t.Fatalf("stats %+v", st)
	}
}
