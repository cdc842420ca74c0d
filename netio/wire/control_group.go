package wire

// GroupDescribe asks for a group's state on one shard; the answer is
// GROUP_INFO.
type GroupDescribe struct {
	Stream StreamRef `json:"stream"`
	Shard  uint32    `json:"shard"`
	Group  string    `json:"group"`
}

// GroupInfo answers GROUP_DESCRIBE.
type GroupInfo struct {
	Stream StreamRef `json:"stream"`
	Shard  uint32    `json:"shard"`
	Group  string    `json:"group"`
	// Cursor is the durable position: every offset below it is finished.
	Cursor uint64 `json:"cursor"`
	// InFlight counts records claimed and not yet acked.
	InFlight uint64 `json:"in_flight"`
	// DeadLetters counts offsets the group gave up on.
	DeadLetters uint64 `json:"dead_letters"`
	// RetentionSkipped counts records retention removed before the group
	// reached them: work the queue dropped, counted rather than silent.
	RetentionSkipped uint64 `json:"retention_skipped"`
	ClaimMillis      uint32 `json:"claim_ms,omitempty"`
	MaxDeliveries    uint32 `json:"max_deliveries,omitempty"`

	// Added in version 1 after the fields above (a reader that does not
	// know them ignores them). NextOffset: records at or above it were
	// never handed out; EndOffset: the shard's end; Lag: EndOffset -
	// Cursor. Owed counts records handed out before and owed again
	// (lapsed, nacked, redriven); Consumers the consumer names the group
	// remembers.
	NextOffset uint64 `json:"next_offset,omitempty"`
	EndOffset  uint64 `json:"end_offset,omitempty"`
	Lag        uint64 `json:"lag,omitempty"`
	Owed       uint64 `json:"owed,omitempty"`
	Consumers  uint64 `json:"consumers,omitempty"`
	// Counters since the answering broker opened the group (they restart
	// with it).
	Delivered    uint64 `json:"delivered,omitempty"`
	Redelivered  uint64 `json:"redelivered,omitempty"`
	Acked        uint64 `json:"acked,omitempty"`
	Nacked       uint64 `json:"nacked,omitempty"`
	Lapsed       uint64 `json:"lapsed,omitempty"`
	DeadLettered uint64 `json:"dead_lettered,omitempty"`
	Redriven     uint64 `json:"redriven,omitempty"`
}

// GroupList lists the groups of one shard; the answer is GROUP_LIST_RESULT.
type GroupList struct {
	Stream StreamRef `json:"stream"`
	Shard  uint32    `json:"shard"`
}

// GroupListResult answers GROUP_LIST.
type GroupListResult struct {
	Groups []string `json:"groups"`
}

// GroupDeadLetters pages through a group's dead letters, oldest first,
// starting after AfterOffset (absent: from the first). Limit 0 is the
// broker's page size. The answer is GROUP_DEAD_LETTERS_RESULT.
type GroupDeadLetters struct {
	Stream      StreamRef `json:"stream"`
	Shard       uint32    `json:"shard"`
	Group       string    `json:"group"`
	AfterOffset *uint64   `json:"after_offset,omitempty"`
	Limit       uint32    `json:"limit,omitempty"`
}

// DeadLetter is one offset a group gave up on.
type DeadLetter struct {
	Offset        uint64 `json:"offset"`
	DeliveryCount uint32 `json:"delivery_count"`
	Reason        string `json:"reason,omitempty"`
	// Detail is a rejecting consumer's words; At when the group gave up
	// on the record, unix nanoseconds. Added after the fields above.
	Detail string `json:"detail,omitempty"`
	At     int64  `json:"at,omitempty"`
}

// GroupDeadLettersResult answers GROUP_DEAD_LETTERS; More says another page
// follows the last entry.
type GroupDeadLettersResult struct {
	DeadLetters []DeadLetter `json:"dead_letters"`
	More        bool         `json:"more,omitempty"`
}

// GroupRedrive makes dead letters owed again: the listed offsets, or all
// of them when Offsets is empty. The answer is GROUP_REDRIVE_RESULT.
type GroupRedrive struct {
	Stream  StreamRef `json:"stream"`
	Shard   uint32    `json:"shard"`
	Group   string    `json:"group"`
	Offsets []uint64  `json:"offsets,omitempty"`
}

// GroupRedriveResult answers GROUP_REDRIVE. NotDead lists offsets the
// request named that were not dead letters (the others were redriven).
type GroupRedriveResult struct {
	Redriven uint64   `json:"redriven"`
	NotDead  []uint64 `json:"not_dead,omitempty"`
}

func (*GroupDescribe) FrameType() Type          { return TypeGroupDescribe }
func (*GroupInfo) FrameType() Type              { return TypeGroupInfo }
func (*GroupList) FrameType() Type              { return TypeGroupList }
func (*GroupListResult) FrameType() Type        { return TypeGroupListResult }
func (*GroupDeadLetters) FrameType() Type       { return TypeGroupDeadLetters }
func (*GroupDeadLettersResult) FrameType() Type { return TypeGroupDeadLettersResult }
func (*GroupRedrive) FrameType() Type           { return TypeGroupRedrive }
func (*GroupRedriveResult) FrameType() Type     { return TypeGroupRedriveResult }

func (m *GroupDescribe) check(l Limits) error {
	return firstErr(l.CheckStreamRef(m.Stream), l.checkNameString(m.Group))
}
func (m *GroupInfo) check(l Limits) error {
	return firstErr(l.CheckStreamRef(m.Stream), l.checkNameString(m.Group))
}
func (m *GroupList) check(l Limits) error { return l.CheckStreamRef(m.Stream) }
func (m *GroupListResult) check(l Limits) error {
	for _, g := range m.Groups {
		if err := l.checkNameString(g); err != nil {
			return err
		}
	}
	return nil
}
func (m *GroupDeadLetters) check(l Limits) error {
	return firstErr(l.CheckStreamRef(m.Stream), l.checkNameString(m.Group),
		l.checkCount(int(m.Limit)))
}
func (*GroupDeadLettersResult) check(Limits) error { return nil }
func (m *GroupRedrive) check(l Limits) error {
	return firstErr(l.CheckStreamRef(m.Stream), l.checkNameString(m.Group),
		l.checkCount(len(m.Offsets)))
}
func (m *GroupRedriveResult) check(l Limits) error { return l.checkCount(len(m.NotDead)) }
