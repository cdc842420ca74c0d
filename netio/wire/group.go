package wire

import "encoding/binary"

// GroupRef names a consumer group on one shard of a stream, and who is
// asking: Consumer, when set, travels under FlagGroupConsumer right after
// the ref (GROUP_POLL, GROUP_ACK, GROUP_NACK, GROUP_EXTEND).
//
//	stream ref | u32 shard | u8 len | group | [u8 len | consumer]
type GroupRef struct {
	Stream   StreamRef
	Shard    uint32
	Group    []byte
	Consumer []byte // empty: the connection is the consumer
}

// flags are the header flags a frame carrying g needs.
func (g GroupRef) flags() Flags {
	if len(g.Consumer) > 0 {
		return FlagGroupConsumer
	}
	return 0
}

func appendGroupRef(b []byte, g GroupRef) []byte {
	b = appendStreamRef(b, g.Stream)
	b = appendU32(b, g.Shard)
	b = appendName(b, g.Group)
	if len(g.Consumer) > 0 {
		b = appendName(b, g.Consumer)
	}
	return b
}

// groupRef reads a group ref, and its consumer under FlagGroupConsumer
// (which must then name one).
func (c *cursor) groupRef(flags Flags, nameBytesMax int) GroupRef {
	g := GroupRef{Stream: c.streamRef(nameBytesMax), Shard: c.u32(), Group: c.name(nameBytesMax)}
	if flags&FlagGroupConsumer != 0 {
		g.Consumer = c.name(nameBytesMax)
		if c.err == nil && len(g.Consumer) == 0 {
			c.fail(errEmptyConsumer)
		}
	}
	return g
}

// GroupPoll asks for up to MaxRecords owed records, waiting up to
// WaitMillis for some to exist (0: answer at once). Each record handed out
// is claimed for ClaimMillis (0: the group's default).
//
//	group ref | u32 max records | u32 wait millis | u32 claim millis
type GroupPoll struct {
	Group       GroupRef
	MaxRecords  uint32
	WaitMillis  uint32
	ClaimMillis uint32
}

// AppendGroupPoll appends a GROUP_POLL frame.
func AppendGroupPoll(dst []byte, requestID uint64, m GroupPoll) []byte {
	dst, start := beginFrame(dst, TypeGroupPoll, m.Group.flags(), requestID)
	dst = appendGroupRef(dst, m.Group)
	dst = appendU32(dst, m.MaxRecords)
	dst = appendU32(dst, m.WaitMillis)
	dst = appendU32(dst, m.ClaimMillis)
	return endFrame(dst, start)
}

// Decode reads a GROUP_POLL frame; m aliases it. MaxRecords above the
// batch limit is a LimitError.
func (m *GroupPoll) Decode(f Frame, lim Limits) error {
	if err := expectType(f, TypeGroupPoll); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	m.Group = c.groupRef(f.Flags, lim.nameBytes())
	m.MaxRecords = c.u32()
	m.WaitMillis = c.u32()
	m.ClaimMillis = c.u32()
	if c.err == nil && uint64(m.MaxRecords) > uint64(lim.batchRecords()) {
		c.fail(&LimitError{Limit: LimitBatchRecords, Max: lim.batchRecords(), Got: uint64(m.MaxRecords)})
	}
	return c.finish()
}

// Offsets is a list of u64 offsets read in place.
type Offsets struct {
	b []byte
}

// Len is the number of offsets.
func (o Offsets) Len() int { return len(o.b) / 8 }

// At is offset i, 0 <= i < Len.
func (o Offsets) At(i int) uint64 { return binary.LittleEndian.Uint64(o.b[i*8:]) }

// AppendTo appends the offsets to dst.
func (o Offsets) AppendTo(dst []uint64) []uint64 {
	for i := range o.Len() {
		dst = append(dst, o.At(i))
	}
	return dst
}

func appendOffsets(b []byte, offsets []uint64) []byte {
	b = appendU32(b, uint32(len(offsets)))
	for _, o := range offsets {
		b = appendU64(b, o)
	}
	return b
}

func (c *cursor) offsets(maxItems int, allowZero bool) Offsets {
	n := c.count(maxItems, 8, allowZero)
	return Offsets{b: c.take(n * 8)}
}

// GroupOffsets is a decoded GROUP_ACK, GROUP_NACK or GROUP_EXTEND: the
// offsets of records the caller holds claims on.
//
//	GROUP_ACK     group ref | u32 count (>= 1) | u64 offset * count
//	GROUP_NACK    group ref | u32 delay millis | u32 count | u64 offset * count
//	GROUP_EXTEND  group ref | u32 extend millis | u32 count | u64 offset * count
//
// Ack finishes the records; nack gives them back, owed again after Millis;
// extend keeps the claims Millis longer. The answer is GROUP_RESULT.
type GroupOffsets struct {
	Op      Type // TypeGroupAck, TypeGroupNack or TypeGroupExtend
	Group   GroupRef
	Millis  uint32 // nack: redelivery delay; extend: extension; ack: 0
	Offsets Offsets
}

// AppendGroupAck appends a GROUP_ACK frame.
func AppendGroupAck(dst []byte, requestID uint64, g GroupRef, offsets []uint64) []byte {
	return appendGroupOffsets(dst, TypeGroupAck, requestID, g, 0, offsets)
}

// AppendGroupNack appends a GROUP_NACK frame.
func AppendGroupNack(dst []byte, requestID uint64, g GroupRef, delayMillis uint32, offsets []uint64) []byte {
	return appendGroupOffsets(dst, TypeGroupNack, requestID, g, delayMillis, offsets)
}

// AppendGroupExtend appends a GROUP_EXTEND frame.
func AppendGroupExtend(dst []byte, requestID uint64, g GroupRef, extendMillis uint32, offsets []uint64) []byte {
	return appendGroupOffsets(dst, TypeGroupExtend, requestID, g, extendMillis, offsets)
}

func appendGroupOffsets(dst []byte, t Type, requestID uint64, g GroupRef, millis uint32, offsets []uint64) []byte {
	if len(offsets) == 0 {
		panic("felix/wire: " + t.String() + " needs at least one offset")
	}
	dst, start := beginFrame(dst, t, g.flags(), requestID)
	dst = appendGroupRef(dst, g)
	if t != TypeGroupAck {
		dst = appendU32(dst, millis)
	}
	dst = appendOffsets(dst, offsets)
	return endFrame(dst, start)
}

// Decode reads a GROUP_ACK, GROUP_NACK or GROUP_EXTEND frame; m aliases it.
func (m *GroupOffsets) Decode(f Frame, lim Limits) error {
	if f.Type != TypeGroupAck && f.Type != TypeGroupNack && f.Type != TypeGroupExtend {
		return errWrongType
	}
	if err := expectType(f, f.Type); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	*m = GroupOffsets{Op: f.Type, Group: c.groupRef(f.Flags, lim.nameBytes())}
	if f.Type != TypeGroupAck {
		m.Millis = c.u32()
	}
	m.Offsets = c.offsets(lim.batchRecords(), false)
	return c.finish()
}

// GroupResult answers GROUP_ACK, GROUP_NACK and GROUP_EXTEND: how many
// offsets were applied, and which were not because the caller's claim on
// them had lapsed or never existed.
//
//	u32 applied | u32 count | u64 offset not held * count
type GroupResult struct {
	Applied uint32
	NotHeld Offsets
}

// AppendGroupResult appends a GROUP_RESULT frame.
func AppendGroupResult(dst []byte, requestID uint64, applied uint32, notHeld []uint64) []byte {
	dst, start := beginFrame(dst, TypeGroupResult, 0, requestID)
	dst = appendU32(dst, applied)
	dst = appendOffsets(dst, notHeld)
	return endFrame(dst, start)
}

// Decode reads a GROUP_RESULT frame; NotHeld aliases it.
func (m *GroupResult) Decode(f Frame, lim Limits) error {
	if err := expectType(f, TypeGroupResult); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	m.Applied = c.u32()
	m.NotHeld = c.offsets(lim.batchRecords(), true)
	return c.finish()
}
