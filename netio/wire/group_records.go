package wire

// GroupRecord is one record handed out by a group poll, now claimed by the
// poller. Key and Value alias the frame when decoded.
type GroupRecord struct {
	Offset uint64
	// DeliveryCount is how many times the record has been handed out,
	// this time included.
	DeliveryCount uint32
	Timestamp     int64 // unix nanoseconds
	Flags         uint16
	Key           []byte
	Value         []byte
}

// GroupRecords answers GROUP_POLL. It may hold no records (the wait ran
// out). Offsets need not increase: a lapsed claim is owed again, ahead of
// newer records.
//
//	u32 shard | u32 count | record * count
//	record: u64 offset | u32 delivery count | i64 timestamp | u16 flags |
//	        uvarint key len | key | uvarint value len | value
type GroupRecords struct {
	Shard uint32
	Count int

	records []byte
}

const minGroupRecordBytes = 8 + 4 + 8 + 2 + 1 + 1

// Decode reads a GROUP_RECORDS frame, checking every record; r aliases it.
func (r *GroupRecords) Decode(f Frame, lim Limits) error {
	if err := expectType(f, TypeGroupRecords); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	*r = GroupRecords{Shard: c.u32()}
	r.Count = c.count(lim.batchRecords(), minGroupRecordBytes, true)
	r.records = c.b
	for i := 0; i < r.Count && c.err == nil; i++ {
		c.groupRecord(lim.keyBytes())
	}
	return c.finish()
}

func (c *cursor) groupRecord(keyBytesMax int) GroupRecord {
	g := GroupRecord{Offset: c.u64(), DeliveryCount: c.u32()}
	g.Timestamp, g.Flags, g.Key, g.Value = c.eventRest(keyBytesMax)
	return g
}

// Records iterates the decoded records.
func (r *GroupRecords) Records() GroupRecordIter {
	return GroupRecordIter{c: cursor{b: r.records}, left: r.Count}
}

// GroupRecordIter walks a decoded GROUP_RECORDS, like EventIter.
type GroupRecordIter struct {
	c    cursor
	left int
	rec  GroupRecord
}

// Next moves to the next record; false at the end.
func (it *GroupRecordIter) Next() bool {
	if it.left <= 0 {
		return false
	}
	it.left--
	it.rec = it.c.groupRecord(keyBytesCap)
	return it.c.err == nil
}

// Record is the current record; its slices alias the frame.
func (it *GroupRecordIter) Record() GroupRecord { return it.rec }

// AppendGroupRecords appends a GROUP_RECORDS frame (recs may be empty).
func AppendGroupRecords(dst []byte, requestID uint64, shard uint32, recs []GroupRecord) []byte {
	w := BeginGroupRecords(dst, requestID, shard)
	for i := range recs {
		w.Add(recs[i])
	}
	return w.Finish()
}

// GroupRecordsWriter builds a GROUP_RECORDS in place.
type GroupRecordsWriter struct {
	buf     []byte
	start   int
	countAt int
	n       uint32
}

// BeginGroupRecords starts a GROUP_RECORDS frame.
func BeginGroupRecords(dst []byte, requestID uint64, shard uint32) GroupRecordsWriter {
	buf, start := beginFrame(dst, TypeGroupRecords, 0, requestID)
	buf = appendU32(buf, shard)
	countAt := len(buf)
	buf = appendU32(buf, 0)
	return GroupRecordsWriter{buf: buf, start: start, countAt: countAt}
}

// Add appends one record.
func (w *GroupRecordsWriter) Add(g GroupRecord) {
	w.buf = appendU64(w.buf, g.Offset)
	w.buf = appendU32(w.buf, g.DeliveryCount)
	w.buf = appendI64(w.buf, g.Timestamp)
	w.buf = appendU16(w.buf, g.Flags)
	w.buf = appendBlob(w.buf, g.Key)
	w.buf = appendBlob(w.buf, g.Value)
	w.n++
}

// Len is the number of records added.
func (w *GroupRecordsWriter) Len() int { return int(w.n) }

// Size is the size of the frame so far, in bytes.
func (w *GroupRecordsWriter) Size() int { return len(w.buf) - w.start }

// Finish completes the frame and returns the buffer.
func (w *GroupRecordsWriter) Finish() []byte {
	putU32(w.buf, w.countAt, w.n)
	return endFrame(w.buf, w.start)
}
