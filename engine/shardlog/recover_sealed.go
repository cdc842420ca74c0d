package shardlog

import (
	"errors"
	"io"

	"github.com/felixbroker/felix/segment"
)

// tailCheckBytesMax bounds the read of a sealed segment's last records at
// open (from its index's last entry to its end): an index interval and a
// record or so. A longer tail is left to the background verification.
const tailCheckBytesMax = 1 << 20

// sealedTail is what the records after an index's last entry showed.
type sealedTail struct {
	maxTs int64 // the segment's newest record time (the index's is its last entry's)
}

// sealedByIndex reports whether the sealed segment s may open on its index
// ix without a scan: the file is exactly as long as the index says, its
// header names s's base, and its last records (after the last entry)
// decode, follow the entry and end where the index says, at the offset it
// says. What this cannot see, damage inside the segment, the background
// verification finds (verify.go), and every read checks the records it
// returns meanwhile.
func (l *Log) sealedByIndex(s *seg, ix *segment.Index) (sealedTail, bool) {
	size, err := s.file.Size()
	if err != nil || size != ix.DataEnd {
		return sealedTail{}, false
	}
	h, ok := l.sealedHeader(s)
	if !ok || h.Base != s.base {
		return sealedTail{}, false
	}
	if len(ix.Entries) == 0 {
		return sealedTail{}, ix.DataEnd == segment.HeaderSize && ix.Next == s.base
	}
	last := ix.Entries[len(ix.Entries)-1]
	if ix.DataEnd-int64(last.Pos) > tailCheckBytesMax {
		return sealedTail{maxTs: last.MaxTimestamp}, true
	}
	return l.checkTail(s, ix, h.Flags&segment.HeaderFlagCompacted != 0)
}

func (l *Log) sealedHeader(s *seg) (segment.Header, bool) {
	b := make([]byte, segment.HeaderSize)
	if _, err := s.file.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
		return segment.Header{}, false
	}
	h, err := segment.DecodeHeader(b)
	return h, err == nil
}

// checkTail reads from the index's last entry to the segment's end and
// checks the records there against the index.
func (l *Log) checkTail(s *seg, ix *segment.Index, compacted bool) (sealedTail, bool) {
	last := ix.Entries[len(ix.Entries)-1]
	buf := make([]byte, ix.DataEnd-int64(last.Pos))
	if n, err := s.file.ReadAt(buf, int64(last.Pos)); n != len(buf) || err != nil && !errors.Is(err, io.EOF) {
		return sealedTail{}, false
	}
	t := sealedTail{maxTs: last.MaxTimestamp}
	want := s.base + int64(last.RelOffset)
	for at := 0; at < len(buf); {
		r, n, err := segment.DecodeRecord(buf[at:])
		follows := r.Offset == want || compacted && at > 0 && r.Offset > want
		if err != nil || !follows || r.Generation != last.Generation {
			return sealedTail{}, false
		}
		t.maxTs = max(t.maxTs, r.Timestamp)
		want, at = r.Offset+1, at+n
	}
	return t, want == ix.Next
}
