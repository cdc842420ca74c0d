package wire

// StartFrom is where a subscription starts reading.
type StartFrom string

const (
	StartLatest   StartFrom = "latest"   // records published after it is registered
	StartEarliest StartFrom = "earliest" // the oldest record retention holds
	StartOffset   StartFrom = "offset"   // Start.Offset
)

// Start is {"from": "offset", "offset": 42}; "offset" only with "offset".
type Start struct {
	From   StartFrom `json:"from"`
	Offset uint64    `json:"offset,omitempty"`
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
}

// Subscribed answers SUBSCRIBE: the id EVENT_BATCH frames carry and the
// offset delivery starts at.
type Subscribed struct {
	SubscriptionID uint64 `json:"subscription_id"`
	FirstOffset    uint64 `json:"first_offset"`
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

func (m *Subscribe) check(l Limits) error {
	if m.Start.From != StartOffset && m.Start.Offset != 0 {
		return invalid("start.offset", "an offset without \"from\": \"offset\"")
	}
	return firstErr(
		l.CheckStreamRef(m.Stream),
		checkEnum("start.from", m.Start.From, StartLatest, StartEarliest, StartOffset),
		checkEnum("overflow", m.Overflow, OverflowDropNew, OverflowDropOld, OverflowDisconnect),
	)
}
func (*Subscribed) check(Limits) error        { return nil }
func (*Unsubscribe) check(Limits) error       { return nil }
func (*SubscriptionEnded) check(Limits) error { return nil }
