package netio

import (
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment"
)

// generationStart is a control record as a Quorum leadership appends it.
var generationStart = engine.Record{Flags: segment.FlagControl | segment.FlagGenerationStart}

type engineAck chan error

func (w engineAck) Published(_ []engine.AckRun, err error) { w <- err }

// publishEngine publishes recs through the engine (control records too,
// which no client frame can carry) and waits for the acknowledgement.
func (b *testBroker) publishEngine(ref wire.StreamRef, recs ...engine.Record) {
	b.t.Helper()
	st, err := b.e.Stream(engine.StreamID{Tenant: string(ref.Tenant), Namespace: string(ref.Namespace), Name: string(ref.Stream)})
	if err != nil {
		b.t.Fatal(err)
	}
	w := make(engineAck, 1)
	if err := st.Publish(recs, w); err != nil {
		b.t.Fatal(err)
	}
	select {
	case err := <-w:
		if err != nil {
			b.t.Fatal(err)
		}
	case <-time.After(waitLimit):
		b.t.Fatal("publish not acknowledged")
	}
}

func eventOffsets(evs []wire.Event) (records, control []uint64) {
	for _, ev := range evs {
		if ev.Flags&wire.EventFlagControl != 0 {
			if len(ev.Key) != 0 || len(ev.Value) != 0 {
				panic("a control event with a key or a value")
			}
			control = append(control, ev.Offset)
		} else {
			records = append(records, ev.Offset)
		}
	}
	return records, control
}

// A session with control_events is pushed a shard's control records as
// flagged events, from history and live, so no gap is left where there is
// no drop; a session without it is pushed the records only, as before.
func TestControlRecordsArePushedAsFlaggedEventsOnlyToASessionThatAsked(t *testing.T) {
	if wire.EventFlagControl != segment.FlagControl {
		t.Fatalf("EventFlagControl %#x is not the stored FlagControl %#x", wire.EventFlagControl, segment.FlagControl)
	}
	b := startBroker(t)
	ref := b.createStream("control", 1)
	rec := func(v string) engine.Record { return engine.Record{Value: []byte(v)} }
	b.publishEngine(ref, generationStart, rec("a"), rec("b"))
	b.publishEngine(ref, generationStart, rec("c"))

	with := b.client(wire.FeaturesAll)
	live := b.client(wire.FeaturesAll)
	without := b.client(wire.FeaturesAll &^ wire.FeatureControlEvents)
	with.subscribe(wire.Subscribe{Stream: ref, Start: wire.Start{From: wire.StartEarliest}})
	without.subscribe(wire.Subscribe{Stream: ref, Start: wire.Start{From: wire.StartEarliest}})
	if s := live.subscribe(wire.Subscribe{Stream: ref}); s.FirstOffset != 5 {
		t.Fatalf("latest starts at %d, want 5", s.FirstOffset)
	}
	records, control := eventOffsets(with.events(5))
	if !equalU64(records, []uint64{1, 2, 4}) || !equalU64(control, []uint64{0, 3}) {
		t.Fatalf("with control_events: records %v, control %v", records, control)
	}
	records, control = eventOffsets(without.events(3))
	if !equalU64(records, []uint64{1, 2, 4}) || len(control) != 0 {
		t.Fatalf("without control_events: records %v, control %v", records, control)
	}
	b.publishEngine(ref, generationStart, rec("d"))
	records, control = eventOffsets(live.events(2))
	if !equalU64(records, []uint64{6}) || !equalU64(control, []uint64{5}) {
		t.Fatalf("live: records %v, control %v", records, control)
	}
	if records, control = eventOffsets(without.events(1)); !equalU64(records, []uint64{6}) || len(control) != 0 {
		t.Fatalf("live without control_events: records %v, control %v", records, control)
	}
	for _, f := range without.ping() {
		t.Fatalf("%v to a session without control_events: %v", f.Type, appendBatch(t, nil, f))
	}
}

func equalU64(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
