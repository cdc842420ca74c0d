package wire

// Publish is any of the four publish frames, decoded into one form so the
// broker handles them alike:
//
//	PUBLISH            stream ref | u8 ack | record
//	PUBLISH_BATCH      stream ref | u8 ack | u32 count | record * count
//	PUBLISH_IDEMPOTENT stream ref | u32 shard | u64 producer id | u32 epoch |
//	                   u64 sequence | u32 count | record * count
//	PUBLISH_JSON       a JSON object (see AppendPublishJSON)
//
//	record: [i64 timestamp, if FlagTimestamp]
//	        [uvarint key len | key, if FlagKeyed]
//	        uvarint value len | value
//
// A decoded Publish aliases the frame (PUBLISH_JSON excepted) and keeps no
// other memory; reuse one across frames.
type Publish struct {
	Stream      StreamRef
	Ack         AckMode // always AckPerBatch for an idempotent batch
	Keyed       bool    // records may carry keys
	Timestamped bool    // records may carry timestamps
	Idempotent  bool    // Producer is set
	Producer    ProducerSeq
	Count       int // records in the batch, at least 1

	flags   Flags
	records []byte   // the binary records, validated
	list    []Record // the JSON records
	json    bool
}

// Decode reads PUBLISH, PUBLISH_BATCH, PUBLISH_IDEMPOTENT or PUBLISH_JSON.
// Every record is checked (key length, value length against the body)
// before Decode returns, so iterating Records cannot fail.
func (p *Publish) Decode(f Frame, lim Limits) error {
	switch f.Type {
	case TypePublish, TypePublishBatch, TypePublishIdempotent:
		return p.decodeBinary(f, lim)
	case TypePublishJSON:
		return p.decodeJSON(f, lim)
	}
	return errWrongType
}

func (p *Publish) decodeBinary(f Frame, lim Limits) error {
	if err := expectFrame(f, f.Type); err != nil {
		return err
	}
	c := cursor{b: f.Body}
	*p = Publish{list: p.list, flags: f.Flags,
		Keyed: f.Flags&FlagKeyed != 0, Timestamped: f.Flags&FlagTimestamp != 0}
	p.Stream = c.streamRef(lim.nameBytes())
	switch f.Type {
	case TypePublish:
		p.Ack, p.Count = c.ackMode(), 1
	case TypePublishBatch:
		p.Ack = c.ackMode()
		p.Count = c.count(lim.batchRecords(), minRecordBytes(f.Flags), false)
	default:
		p.Ack, p.Idempotent = AckPerBatch, true
		p.Producer = c.producerSeq()
		p.Count = c.count(lim.batchRecords(), minRecordBytes(f.Flags), false)
	}
	p.records = c.b
	for i := 0; i < p.Count && c.err == nil; i++ {
		c.record(f.Flags, lim.keyBytes())
	}
	return c.finish()
}

func (c *cursor) producerSeq() ProducerSeq {
	return ProducerSeq{Shard: c.u32(), ProducerID: c.u64(), Epoch: c.u32(), Sequence: c.u64()}
}

func appendProducerSeq(b []byte, s ProducerSeq) []byte {
	b = appendU32(b, s.Shard)
	b = appendU64(b, s.ProducerID)
	b = appendU32(b, s.Epoch)
	return appendU64(b, s.Sequence)
}

// Records iterates the decoded records in order.
func (p *Publish) Records() RecordIter {
	return RecordIter{c: cursor{b: p.records}, flags: p.flags, list: p.list, json: p.json, left: p.Count}
}

// RecordIter walks a decoded publish:
//
//	it := p.Records()
//	for it.Next() {
//		r := it.Record()
//	}
type RecordIter struct {
	c     cursor
	flags Flags
	list  []Record
	json  bool
	left  int
	rec   Record
}

// Next moves to the next record; false at the end.
func (it *RecordIter) Next() bool {
	if it.left <= 0 {
		return false
	}
	it.left--
	if it.json {
		it.rec, it.list = it.list[0], it.list[1:]
		return true
	}
	it.rec = it.c.record(it.flags, keyBytesCap)
	return it.c.err == nil
}

// Record is the current record; its slices alias the frame.
func (it *RecordIter) Record() Record { return it.rec }

// AppendRecords appends every record of p to dst, for a caller that wants
// them as a slice. The records still alias the frame.
func (p *Publish) AppendRecords(dst []Record) []Record {
	it := p.Records()
	for it.Next() {
		dst = append(dst, it.Record())
	}
	return dst
}

// AppendPublish appends a PUBLISH frame for one record. It sets FlagKeyed
// when the record has a key: a session without FeaturePublishKeyed must
// send a keyed record with AppendPublishJSON instead.
func AppendPublish(dst []byte, requestID uint64, ref StreamRef, ack AckMode, r Record) []byte {
	flags := RecordFlags(r)
	dst, start := beginFrame(dst, TypePublish, flags, requestID)
	dst = appendStreamRef(dst, ref)
	dst = appendAck(dst, ack)
	dst = appendRecord(dst, flags, r)
	return endFrame(dst, start)
}

// AppendPublishBatch appends a PUBLISH_BATCH frame, or nothing for no
// records. Flags come from RecordFlags(recs...), as for AppendPublish.
func AppendPublishBatch(dst []byte, requestID uint64, ref StreamRef, ack AckMode, recs []Record) []byte {
	w := BeginPublishBatch(dst, requestID, ref, ack, RecordFlags(recs...))
	for i := range recs {
		w.Add(recs[i])
	}
	return w.Finish()
}

// AppendPublishIdempotent appends a PUBLISH_IDEMPOTENT frame, or nothing
// for no records.
func AppendPublishIdempotent(dst []byte, requestID uint64, ref StreamRef, seq ProducerSeq, recs []Record) []byte {
	w := BeginPublishIdempotent(dst, requestID, ref, seq, RecordFlags(recs...))
	for i := range recs {
		w.Add(recs[i])
	}
	return w.Finish()
}

// PublishBatchWriter builds a PUBLISH_BATCH or PUBLISH_IDEMPOTENT in place,
// one record at a time, so a client can batch without a []Record:
//
//	w := wire.BeginPublishBatch(buf[:0], id, ref, wire.AckPerBatch, wire.FlagKeyed)
//	for ... { w.Add(rec); if w.Size() > budget { break } }
//	buf = w.Finish()
type PublishBatchWriter struct {
	buf     []byte
	start   int
	countAt int
	flags   Flags
	n       uint32
}

// BeginPublishBatch starts a PUBLISH_BATCH. flags (FlagKeyed, FlagTimestamp)
// decide the record layout for the whole batch.
func BeginPublishBatch(dst []byte, requestID uint64, ref StreamRef, ack AckMode, flags Flags) PublishBatchWriter {
	w := beginPublishWriter(dst, TypePublishBatch, requestID, flags)
	w.buf = appendStreamRef(w.buf, ref)
	w.buf = appendAck(w.buf, ack)
	return w.countHere()
}

// BeginPublishIdempotent starts a PUBLISH_IDEMPOTENT.
func BeginPublishIdempotent(dst []byte, requestID uint64, ref StreamRef, seq ProducerSeq, flags Flags) PublishBatchWriter {
	w := beginPublishWriter(dst, TypePublishIdempotent, requestID, flags)
	w.buf = appendStreamRef(w.buf, ref)
	w.buf = appendProducerSeq(w.buf, seq)
	return w.countHere()
}

func beginPublishWriter(dst []byte, t Type, requestID uint64, flags Flags) PublishBatchWriter {
	if flags&^publishFlags != 0 {
		panic("felix/wire: publish flags other than FlagKeyed and FlagTimestamp")
	}
	buf, start := beginFrame(dst, t, flags, requestID)
	return PublishBatchWriter{buf: buf, start: start, flags: flags}
}

func (w PublishBatchWriter) countHere() PublishBatchWriter {
	w.countAt = len(w.buf)
	w.buf = appendU32(w.buf, 0)
	return w
}

// Add appends one record. A key without FlagKeyed, or a timestamp without
// FlagTimestamp, panics: dropping either would change where or when the
// record lands.
func (w *PublishBatchWriter) Add(r Record) {
	w.buf = appendRecord(w.buf, w.flags, r)
	w.n++
}

// Len is the number of records added.
func (w *PublishBatchWriter) Len() int { return int(w.n) }

// Size is the size of the frame so far, in bytes.
func (w *PublishBatchWriter) Size() int { return len(w.buf) - w.start }

// Finish completes the frame and returns the buffer. With no records added
// it appends nothing: an empty batch is not a frame.
func (w *PublishBatchWriter) Finish() []byte {
	if w.n == 0 {
		return w.buf[:w.start]
	}
	putU32(w.buf, w.countAt, w.n)
	return endFrame(w.buf, w.start)
}
