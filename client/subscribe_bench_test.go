package client

import (
	"context"
	"testing"

	"github.com/felixbroker/felix/netio/wire"
)

// BenchmarkSubscriptionPushNext100 is the client's side of delivery: one
// decoded EVENT_BATCH of 100 events queued in the read-ahead (push) and
// taken by the reader (Next).
func BenchmarkSubscriptionPushNext100(b *testing.B) {
	evs := make([]wire.Event, 100)
	value := make([]byte, 1024)
	for i := range evs {
		evs[i] = wire.Event{Offset: uint64(i), Timestamp: int64(i), Value: value}
	}
	frame := wire.AppendEventBatch(nil, 0, 7, 0, evs)
	f, _, err := (&wire.Reader{}).Next(frame)
	if err != nil {
		b.Fatal(err)
	}
	var batch wire.EventBatch
	if err := batch.Decode(f, wire.Limits{}); err != nil {
		b.Fatal(err)
	}
	s := newSubscription(nil, Stream{}, 0, SubscribeOptions{Buffer: 128})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s.next = 0
		s.push(nil, &batch)
		for range evs {
			if ev, err := s.Next(ctx); err != nil || ev.Missed != 0 {
				b.Fatalf("%+v, %v", ev, err)
			}
		}
	}
}
