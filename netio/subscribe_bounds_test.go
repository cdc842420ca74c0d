package netio

import (
	"testing"

	"github.com/felixbroker/felix/netio/wire"
)

// A subscription until its end gets its records below the end, then
// SUBSCRIPTION_AT_END naming it, and nothing after; SUBSCRIBED says the
// end.
func TestASubscriptionUntilItsEndIsMarkedAtItsEnd(t *testing.T) {
	b := startBroker(t)
	ref := b.createStream("bounded", 1)
	if err := publishN(b.s.Addr().String(), ref, 0, 40, 10); err != nil {
		t.Fatal(err)
	}
	c := b.client(wire.FeaturesAll)
	s := c.subscribe(wire.Subscribe{Stream: ref, Start: wire.Start{From: wire.StartEarliest}, UntilEnd: true})
	if s.EndOffset == nil || *s.EndOffset != 40 {
		t.Fatalf("SUBSCRIBED %+v, want end offset 40", s)
	}
	if err := publishN(b.s.Addr().String(), ref, 40, 10, 10); err != nil {
		t.Fatal(err)
	}
	var got uint64
	for {
		f := c.read()
		if f.Type == wire.TypeSubscriptionAtEnd {
			m := decodeControl[wire.SubscriptionAtEnd](t, f)
			if m.SubscriptionID != s.SubscriptionID || m.EndOffset != 40 || got != 40 || f.RequestID != 0 {
				t.Fatalf("SUBSCRIPTION_AT_END %+v (request %d) after %d events, want end 40 after 40", m, f.RequestID, got)
			}
			break
		}
		var eb wire.EventBatch
		if err := eb.Decode(f, wire.Limits{}); err != nil {
			t.Fatalf("%v: %v", f.Type, err)
		}
		for it := eb.Events(); it.Next(); got++ {
			if ev := it.Event(); ev.Offset != got {
				t.Fatalf("event at offset %d, want %d", ev.Offset, got)
			}
		}
	}
	for _, f := range c.ping() {
		t.Fatalf("%v after SUBSCRIPTION_AT_END", f.Type)
	}
}

// A broker refuses a bounded SUBSCRIBE on a session without
// subscribe_bounds, naming the bit, and the connection goes on.
func TestABoundedSubscribeNeedsTheFeatureAtTheBroker(t *testing.T) {
	b := startBroker(t)
	ref := b.createStream("unbounded", 1)
	c := b.client(wire.FeaturesAll &^ wire.FeatureSubscribeBounds)
	for _, m := range []wire.Subscribe{{Stream: ref, UntilEnd: true}, {Stream: ref, Start: wire.Start{From: wire.StartTime, Time: 1}}} {
		id := c.id()
		c.send(wire.AppendControl(nil, id, &m))
		if e := c.expectError(wire.CodeFeatureNotNegotiated, id); e.Details.Feature != wire.FeatureSubscribeBounds {
			t.Fatalf("refusal names %v, want subscribe_bounds", e.Details.Feature)
		}
	}
	c.ping()
}
