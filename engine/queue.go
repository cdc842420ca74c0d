package engine

import "github.com/felixbroker/felix/segment"

// byteQueue is a subscriber's bounded queue of framed records, oldest first.
// Its records (control records aside) never take more than maxBytes nor
// number more than maxRecords. A control record, queued only for a reader
// that asked for them (SubscribeOptions.Control), is outside the bounds and
// never dropped: it is how the reader learns that its offset holds no
// record, and a shard's log has one per leadership, a few dozen bytes. The
// bounds grow by each control record queued and shrink as it leaves, so
// fits costs no more than without them.
type byteQueue struct {
	buf        []byte
	head       int
	records    int // control records included
	control    int // of records, the control records
	maxBytes   int // the bound, plus the control records' bytes
	maxRecords int // the bound, plus the control records
}

func (q *byteQueue) empty() bool { return q.records == 0 }

// data is the number of queued records that are not control records.
func (q *byteQueue) data() int { return q.records - q.control }

func (q *byteQueue) bytes() int { return len(q.buf) - q.head }

// fits reports whether a record of size bytes can be queued now.
func (q *byteQueue) fits(size int) bool {
	return q.records < q.maxRecords && q.bytes()+size <= q.maxBytes
}

// push queues one framed record; the caller checked fits.
func (q *byteQueue) push(rec []byte) {
	if q.head > 0 && cap(q.buf)-len(q.buf) < len(rec) {
		n := copy(q.buf, q.buf[q.head:])
		q.buf, q.head = q.buf[:n], 0
	}
	q.buf = append(q.buf, rec...)
	q.records++
}

// pushControl queues one framed control record, whatever the bounds.
func (q *byteQueue) pushControl(rec []byte) {
	q.push(rec)
	q.control++
	q.maxRecords++
	q.maxBytes += len(rec)
}

// dropOldest discards the oldest record that is not a control record; the
// caller checked there is one. Control records queued before it stay, in
// order, moved up over it.
func (q *byteQueue) dropOldest() {
	pos := q.head
	for q.control > 0 && q.isControl(pos) {
		size, _ := segment.PeekSize(q.buf[pos:])
		pos += size
	}
	size, _ := segment.PeekSize(q.buf[pos:])
	copy(q.buf[q.head+size:pos+size], q.buf[q.head:pos])
	q.head += size
	q.records--
	q.resetIfEmpty()
}

// isControl reports whether the record at pos is a control record. Only
// called while control records are queued: off the common path.
func (q *byteQueue) isControl(pos int) bool {
	r, _, err := segment.DecodeRecord(q.buf[pos:])
	return err == nil && r.Flags&segment.FlagControl != 0
}

// popInto moves whole records from the head into dst, up to maxBytes but at
// least one.
func (q *byteQueue) popInto(dst []byte, maxBytes int) []byte {
	start, pos := q.head, q.head
	for q.records > 0 {
		size, _ := segment.PeekSize(q.buf[pos:])
		if pos > start && pos+size-start > maxBytes {
			break
		}
		if q.control > 0 && q.isControl(pos) {
			q.control--
			q.maxRecords--
			q.maxBytes -= size
		}
		pos += size
		q.records--
	}
	dst = append(dst, q.buf[start:pos]...)
	q.head = pos
	q.resetIfEmpty()
	return dst
}

func (q *byteQueue) resetIfEmpty() {
	if q.records == 0 {
		q.buf, q.head = q.buf[:0], 0 // control is 0 too: no control record is dropped
	}
}
