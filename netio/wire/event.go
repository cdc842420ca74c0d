package wire

import "math"

// EventFlagControl in an event's flags marks an offset that holds no
// record: a log's control record (a replicated shard's generation start),
// pushed only on a session with FeatureControlEvents, with no key and no
// value. It is segment.FlagControl, the bit as stored.
const EventFlagControl uint16 = 1 << 2

// Event is one record delivered to a subscriber, or with EventFlagControl
// an offset that holds none. Key and Value alias the frame when decoded.
type Event struct {
	Offset    uint64
	Timestamp int64  // unix nanoseconds
	Flags     uint16 // the record's flags as stored (segment's bit assignments)
	Key       []byte
	Value     []byte
}

// EventBatch is a decoded EVENT_BATCH: records of one shard pushed to one
// subscription, request id 0.
//
//	u64 subscription id | u32 shard | u64 base offset | u32 count (>= 1) |
//	event * count
//	event: uvarint offset delta | i64 timestamp | u16 flags |
//	       uvarint key len | key | uvarint value len | value
//
// An event's offset is base offset + its delta. Deltas strictly increase
// within a batch; offsets are dense in a log, so a delta that skips one is
// an offset this subscriber did not get and can tell. On a session with
// FeatureControlEvents the offsets that hold no record come as events
// flagged EventFlagControl, so a skipped offset is exactly a record
// dropped; without it a skipped offset may also be a control record.
type EventBatch struct {
	SubscriptionID uint64
	Shard          uint32
	BaseOffset     uint64
	Count          int
	LastOffset     uint64 // the offset of the last event: resume after it

	events []byte
}

const minEventBytes = 1 + 8 + 2 + 1 + 1

// Decode reads an EVENT_BATCH frame, checking every event, so iterating
// cannot fail. b aliases the frame.
func (b *EventBatch) Decode(f Frame, lim Limits) error {
	if err := expectType(f, TypeEventBatch); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	*b = EventBatch{SubscriptionID: c.u64(), Shard: c.u32(), BaseOffset: c.u64()}
	b.Count = c.count(lim.batchRecords(), minEventBytes, false)
	b.events = c.b
	var prev uint64
	for i := 0; i < b.Count && c.err == nil; i++ {
		delta := c.uvarint()
		if (i > 0 && delta <= prev) || delta > math.MaxUint64-b.BaseOffset {
			c.fail(errBadOffsets)
		}
		prev = delta
		c.eventRest(lim.keyBytes())
	}
	b.LastOffset = b.BaseOffset + prev
	return c.finish()
}

func (c *cursor) eventRest(keyBytesMax int) (ts int64, flags uint16, key, value []byte) {
	ts = c.i64()
	flags = c.u16()
	key = c.key(keyBytesMax)
	value = c.blob()
	return ts, flags, key, value
}

// Events iterates the decoded events in order.
func (b *EventBatch) Events() EventIter {
	return EventIter{c: cursor{b: b.events}, base: b.BaseOffset, left: b.Count}
}

// EventIter walks a decoded EVENT_BATCH:
//
//	it := batch.Events()
//	for it.Next() {
//		ev := it.Event()
//	}
type EventIter struct {
	c    cursor
	base uint64
	left int
	ev   Event
}

// Next moves to the next event; false at the end.
func (it *EventIter) Next() bool {
	if it.left <= 0 {
		return false
	}
	it.left--
	it.ev.Offset = it.base + it.c.uvarint()
	it.ev.Timestamp, it.ev.Flags, it.ev.Key, it.ev.Value = it.c.eventRest(keyBytesCap)
	return it.c.err == nil
}

// Event is the current event; its slices alias the frame.
func (it *EventIter) Event() Event { return it.ev }

// AppendEventBatch appends an EVENT_BATCH whose base offset is the first
// event's, or nothing for no events. Offsets must strictly increase.
func AppendEventBatch(dst []byte, requestID, subscriptionID uint64, shard uint32, events []Event) []byte {
	if len(events) == 0 {
		return dst
	}
	w := BeginEventBatch(dst, requestID, subscriptionID, shard, events[0].Offset)
	for i := range events {
		w.Add(events[i])
	}
	return w.Finish()
}

// EventBatchWriter builds an EVENT_BATCH in place as the server reads
// records from the log.
type EventBatchWriter struct {
	buf     []byte
	start   int
	countAt int
	base    uint64
	last    uint64 // the offset of the last event added
	n       uint32
}

// BeginEventBatch starts an EVENT_BATCH; every event's offset must be at
// least baseOffset.
func BeginEventBatch(dst []byte, requestID, subscriptionID uint64, shard uint32, baseOffset uint64) EventBatchWriter {
	buf, start := beginFrame(dst, TypeEventBatch, 0, requestID)
	buf = appendU64(buf, subscriptionID)
	buf = appendU32(buf, shard)
	buf = appendU64(buf, baseOffset)
	countAt := len(buf)
	buf = appendU32(buf, 0)
	return EventBatchWriter{buf: buf, start: start, countAt: countAt, base: baseOffset}
}

// Add appends one event. An offset below the base or not above the last
// one panics: the subscriber would misread it as a drop or a duplicate.
func (w *EventBatchWriter) Add(ev Event) {
	if ev.Offset < w.base || (w.n > 0 && ev.Offset <= w.last) {
		panic("felix/wire: event offsets in a batch must strictly increase from the base")
	}
	w.buf = appendUvarint(w.buf, ev.Offset-w.base)
	w.buf = appendI64(w.buf, ev.Timestamp)
	w.buf = appendU16(w.buf, ev.Flags)
	w.buf = appendBlob(w.buf, ev.Key)
	w.buf = appendBlob(w.buf, ev.Value)
	w.last = ev.Offset
	w.n++
}

// Len is the number of events added.
func (w *EventBatchWriter) Len() int { return int(w.n) }

// Size is the size of the frame so far, in bytes.
func (w *EventBatchWriter) Size() int { return len(w.buf) - w.start }

// Finish completes the frame and returns the buffer; with no events it
// appends nothing.
func (w *EventBatchWriter) Finish() []byte {
	if w.n == 0 {
		return w.buf[:w.start]
	}
	putU32(w.buf, w.countAt, w.n)
	return endFrame(w.buf, w.start)
}
