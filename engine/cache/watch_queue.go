package cache

import "github.com/felixbroker/felix/segment"

// eventQueue is a watch's bounded queue of framed records, oldest first. It
// never holds more than maxBytes nor more than maxEvents; a record that
// does not fit ends the watch (the caller's decision), it never waits.
type eventQueue struct {
	buf       []byte
	head      int
	n         int
	maxBytes  int
	maxEvents int
}

func (q *eventQueue) empty() bool { return q.n == 0 }

func (q *eventQueue) fits(size int) bool {
	return q.n < q.maxEvents && len(q.buf)-q.head+size <= q.maxBytes
}

// push queues one framed record; the caller checked fits.
func (q *eventQueue) push(rec []byte) {
	if q.head > 0 && cap(q.buf)-len(q.buf) < len(rec) {
		n := copy(q.buf, q.buf[q.head:])
		q.buf, q.head = q.buf[:n], 0
	}
	q.buf = append(q.buf, rec...)
	q.n++
}

// pop moves the oldest record into dst (replacing its contents).
func (q *eventQueue) pop(dst []byte) []byte {
	size, _ := segment.PeekSize(q.buf[q.head:])
	dst = append(dst[:0], q.buf[q.head:q.head+size]...)
	q.head += size
	q.n--
	if q.n == 0 {
		q.buf, q.head = q.buf[:0], 0
	}
	return dst
}

// recordBuf is framed records being handed out one at a time by the
// reader: a snapshot, or history read from the log.
type recordBuf struct {
	b   []byte
	pos int
}

// next returns the next record, or false when none is left.
func (r *recordBuf) next() (segment.Record, bool) {
	if r.pos >= len(r.b) {
		return segment.Record{}, false
	}
	rec, n, err := segment.DecodeRecord(r.b[r.pos:])
	if err != nil {
		panic("felix/cache: broken invariant: a watch buffer holds a record that does not decode: " + err.Error())
	}
	r.pos += n
	return rec, true
}

func (r *recordBuf) reset(b []byte) { r.b, r.pos = b, 0 }
