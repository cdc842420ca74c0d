package engine

import "github.com/felixbroker/felix/segment"

// byteQueue is a subscriber's bounded queue of framed records, oldest first.
// It never holds more than maxBytes nor more than maxRecords.
type byteQueue struct {
	buf        []byte
	head       int
	records    int
	maxBytes   int
	maxRecords int
}

func (q *byteQueue) empty() bool { return q.records == 0 }

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

// dropOldest discards the record at the head and returns its offset.
func (q *byteQueue) dropOldest() int64 {
	r, n, _ := segment.DecodeRecord(q.buf[q.head:])
	q.head += n
	q.records--
	q.resetIfEmpty()
	return r.Offset
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
		q.buf, q.head = q.buf[:0], 0
	}
}
