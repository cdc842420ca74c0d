package wire

// StartFrom is where a subscription starts reading.
type StartFrom string

const (
	StartLatest   StartFrom = "latest"   // records published after it is registered
	StartEarliest StartFrom = "earliest" // the oldest record retention holds
	StartOffset   StartFrom = "offset"   // Start.Offset
	// StartTime is the first record whose timestamp is at or after
	// Start.Time (the shard's end when none is); FeatureSubscribeBounds.
	StartTime StartFrom = "time"
)

// Start is {"from": "offset", "offset": 42} or {"from": "time", "time":
// unix ns}; "offset" only with "offset", "time" only with "time".
type Start struct {
	From   StartFrom `json:"from"`
	Offset uint64    `json:"offset,omitempty"`
	Time   int64     `json:"time,omitempty"`
}

// Overflow is what a full subscriber queue does with the next record.
type Overflow string

const (
	OverflowDropNew    Overflow = "DropNew"    // drop the incoming record (the default)
	OverflowDropOld    Overflow = "DropOld"    // drop the oldest queued record
	OverflowDisconnect Overflow = "Disconnect" // end the subscription: subscriber_lagged
)

// Subscribe reads one shard of a stream; the answer is SUBSCRIBED, then
// EVENT_BATCH frames, or ERROR not_leader naming the owner.
type Subscribe struct {
	Stream StreamRef `json:"stream"`
	Shard  uint32    `json:"shard"`
	Start  Start     `json:"start"`
	// QueueCapacity bounds the subscriber's queue, in records; 0 is the
	// broker's default.
	QueueCapacity uint32   `json:"queue_capacity,omitempty"`
	Overflow      Overflow `json:"overflow,omitempty"`
	// UntilEnd ends the subscription at an end offset: the shard's end
	// when it registers, or UntilOffset when set (a subscription opened
	// again after a failover keeps its first end). Once every record
	// below it has been sent (or dropped, a gap) the broker pushes
	// SUBSCRIPTION_AT_END and sends nothing more of it. Offsets of control
	// records never reach a subscriber, so only the broker can say a
	// shard's end is reached. FeatureSubscribeBounds.
	UntilEnd    bool    `json:"until_end,omitempty"`
	UntilOffset *uint64 `json:"until_offset,omitempty"`
}

// RequiredFeatures is what a session needs to carry this SUBSCRIBE: a
// start at a time or an end needs FeatureSubscribeBounds.
func (m *Subscribe) RequiredFeatures() Features {
	need := RequiredFeatures(TypeSubscribe, 0)
	if m.Start.From == StartTime || m.UntilEnd {
		need |= FeatureSubscribeBounds
	}
	return need
}

// Subscribed answers SUBSCRIBE: the id EVENT_BATCH frames carry, the
// offset delivery starts at, and, for a SUBSCRIBE with until_end, the
// offset it ends at.
type Subscribed struct {
	SubscriptionID uint64  `json:"subscription_id"`
	FirstOffset    uint64  `json:"first_offset"`
	EndOffset      *uint64 `json:"end_offset,omitempty"`
}

// SubscriptionAtEnd is pushed (request id 0) once a subscription with
// until_end has sent every record below EndOffset: it is over, nothing of
// it follows, and it needs no UNSUBSCRIBE. FeatureSubscribeBounds.
type SubscriptionAtEnd struct {
	SubscriptionID uint64 `json:"subscription_id"`
	EndOffset      uint64 `json:"end_offset"`
}

// Unsubscribe ends a subscription; the answer is OK. Events already in
// flight may still arrive before it.
type Unsubscribe struct {
	SubscriptionID uint64 `json:"subscription_id"`
}

// SubscriptionEnded is pushed (request id 0) when the broker ends a
// subscription: subscriber_lagged (overflow Disconnect; FirstMissedOffset
// says where to resume), not_leader (the shard moved), not_found (the
// stream was deleted), shutting_down.
type SubscriptionEnded struct {
	SubscriptionID    uint64  `json:"subscription_id"`
	Code              Code    `json:"code"`
	Message           string  `json:"message,omitempty"`
	FirstMissedOffset *uint64 `json:"first_missed_offset,omitempty"`
}

func (*Subscribe) FrameType() Type         { return TypeSubscribe }
func (*Subscribed) FrameType() Type        { return TypeSubscribed }
func (*Unsubscribe) FrameType() Type       { return TypeUnsubscribe }
func (*SubscriptionEnded) FrameType() Type { return TypeSubscriptionEnded }
func (*SubscriptionAtEnd) FrameType() Type { return TypeSubscriptionAtEnd }

func (m *Subscribe) check(l Limits) error {
	if m.Start.From != StartOffset && m.Start.Offset != 0 {
		return invalid("start.offset", "an offset without \"from\": \"offset\"")
	}
	if m.Start.From != StartTime && m.Start.Time != 0 {
		return invalid("start.time", "a time without \"from\": \"time\"")
	}
	if m.UntilOffset != nil && !m.UntilEnd {
		return invalid("until_offset", "an end offset without \"until_end\"")
	}
	return firstErr(
		l.CheckStreamRef(m.Stream),
		checkEnum("start.from", m.Start.From, StartLatest, StartEarliest, StartOffset, StartTime),
		checkEnum("overflow", m.Overflow, OverflowDropNew, OverflowDropOld, OverflowDisconnect),
	)
}
func (*Subscribed) check(Limits) error        { return nil }
func (*Unsubscribe) check(Limits) error       { return nil }
func (*SubscriptionEnded) check(Limits) error { return nil }
func (*SubscriptionAtEnd) check(Limits) error { return nil }
