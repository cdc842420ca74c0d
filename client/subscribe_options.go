package client

import (
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// subscribeFeatures are the bits a subscription offers: a bounded one
// needs subscribe_bounds, and control_events makes Event.Missed count
// drops only.
const subscribeFeatures = wire.FeatureSubscribeBounds | wire.FeatureControlEvents

// FeatureSubscribeBounds is the protocol's bit for FromTime and Until: a
// broker without it is not asked for either.
const FeatureSubscribeBounds = Features(wire.FeatureSubscribeBounds)

// FeatureControlEvents is the protocol's bit by which the broker says
// which offsets hold no record (a replicated shard's control records), so
// that Event.Missed counts only records dropped. In DefaultFeatures.
const FeatureControlEvents = Features(wire.FeatureControlEvents)

// Start is where a subscription starts reading; the zero Start is latest.
type Start struct {
	from   wire.StartFrom
	offset int64
	time   int64 // unix ns, with FromTime
}

// FromLatest starts at the records published after the subscription is
// registered.
func FromLatest() Start { return Start{from: wire.StartLatest} }

// FromEarliest starts at the oldest record retention still holds.
func FromEarliest() Start { return Start{from: wire.StartEarliest} }

// FromOffset starts at offset, which must lie between the oldest offset
// retention holds (ErrOffsetBelowRetention otherwise) and the next offset
// to be written (ErrOffsetPastTail otherwise). Resuming after the last
// event handled is FromOffset(ev.Offset+1): stored history joins live
// delivery with no gap and no duplicate.
func FromOffset(offset int64) Start { return Start{from: wire.StartOffset, offset: offset} }

// FromTime starts at the first record whose timestamp is at or after t
// (the shard's end when there is none): the broker looks it up in the
// shard's sparse index, never reading the whole log. A broker that does
// not serve it (FeatureSubscribeBounds) is not asked: the subscribe fails
// with ErrFeatureNotNegotiated. Subscription.FirstOffset is the offset it
// found.
func FromTime(t time.Time) Start { return Start{from: wire.StartTime, time: t.UnixNano()} }

// Until is where a subscription stops; the zero Until never does.
type Until struct {
	set    bool
	offset int64 // -1: the shard's end when the subscription registers
}

// UntilEnd stops at the shard's end as it is when the subscription
// registers (as kcat -e): once every record below it has been delivered
// (or dropped, a gap), Next returns an error matching ErrEndReached. Only
// the broker can say the end is reached, since the offsets of its control
// records are never delivered; a broker that does not serve it
// (FeatureSubscribeBounds) is not asked: the subscribe fails with
// ErrFeatureNotNegotiated.
func UntilEnd() Until { return Until{set: true, offset: -1} }

// UntilOffset stops before offset, as UntilEnd does at the end: to open
// again, from its ResumeOffset, a subscription that ended early, with the
// end it had (Subscription.EndOffset).
func UntilOffset(offset int64) Until { return Until{set: true, offset: max(offset, 0)} }

func (u Until) wire(m *wire.Subscribe) {
	if !u.set {
		return
	}
	m.UntilEnd = true
	if u.offset >= 0 {
		m.UntilOffset = wire.U64(uint64(u.offset))
	}
}

// Overflow is what the subscription's full queue at the broker does with
// the next record. It is the only place a subscription loses records: the
// client never drops one.
type Overflow uint8

const (
	// DropNew drops the incoming record (the default).
	DropNew Overflow = iota
	// DropOld drops the oldest queued record.
	DropOld
	// Disconnect ends the subscription with ErrSubscriberLagged, naming the
	// first missed offset.
	Disconnect
)

func (o Overflow) wire() wire.Overflow {
	switch o {
	case DropOld:
		return wire.OverflowDropOld
	case Disconnect:
		return wire.OverflowDisconnect
	}
	return wire.OverflowDropNew
}

// DefaultSubscribeBuffer is a subscription's read-ahead in the client, in
// events, when SubscribeOptions.Buffer is zero.
const DefaultSubscribeBuffer = 1024

// SubscribeOptions configure a subscription; the zero value reads live
// records from now on with the broker's default queue and DropNew.
type SubscribeOptions struct {
	Start Start
	// QueueCapacity bounds the subscription's queue at the broker, in
	// records; 0 is the broker's default.
	QueueCapacity uint32
	Overflow      Overflow
	// Buffer bounds the events received but not yet taken by Next; 0 is
	// DefaultSubscribeBuffer. When it is full the subscription's connection
	// stops reading, so the broker's queue fills and Overflow applies
	// there; a replay of history is simply paced.
	Buffer int
	// Until is where the subscription stops: UntilEnd, UntilOffset; the
	// zero Until never does.
	Until Until
}

// Event is one record delivered to a subscriber. Its slices are its own:
// the client never reuses them.
type Event struct {
	Shard     int
	Offset    int64
	Timestamp time.Time
	Key       []byte
	Value     []byte
	// Missed is the number of records this subscriber did not get just
	// before this event: dropped by the overflow policy of the
	// subscription's queue at the broker (DropNew, DropOld), or removed by
	// retention before the subscription read them. When the session
	// negotiated FeatureControlEvents (the default, with a broker that
	// offers it) the broker says which offsets hold no record (a
	// replicated shard's control records, such as the generation start
	// each leadership writes), and they are not counted: Missed is exactly
	// the records dropped (retention aside, which may remove a control
	// record unseen: it counts). A drop just before a control offset is
	// counted on the next event. Without the bit Missed is the number of
	// offsets skipped, control records' included: on a replicated shard it
	// can be above zero with nothing dropped.
	Missed uint64
}

// event is an Event as queued: 64 bytes, not 104. An offset that holds no
// record (an EventFlagControl event) is queued as ^offset, negative, with
// nothing else: the reader passes it without handing it over.
type event struct {
	offset int64
	ts     int64
	key    []byte
	value  []byte
}
