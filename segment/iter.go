package segment

// Iter walks the records of a byte slice that holds whole framed records,
// as a log read returns them. It verifies each record's checksums.
//
//	it := segment.NewIter(b)
//	for rec, ok := it.Next(); ok; rec, ok = it.Next() { ... }
//	if err := it.Err(); err != nil { ... }
type Iter struct {
	b   []byte
	pos int
	err error
}

// NewIter returns an iterator over b.
func NewIter(b []byte) Iter { return Iter{b: b} }

// Next returns the next record. ok is false at the end of b or on the first
// record that does not verify (then Err says why).
func (it *Iter) Next() (Record, bool) {
	if it.err != nil || it.pos >= len(it.b) {
		return Record{}, false
	}
	r, n, err := DecodeRecord(it.b[it.pos:])
	if err != nil {
		it.err = err
		return Record{}, false
	}
	it.pos += n
	return r, true
}

// Pos is the byte position in b of the record Next will return.
func (it *Iter) Pos() int { return it.pos }

// Err is the decoder's verdict on the record that stopped the walk, nil when
// the walk ended cleanly at the end of b.
func (it *Iter) Err() error { return it.err }
