package shardlog

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/felixbroker/felix/segment"
)

// tailCheckBytesMax bounds the read of a sealed segment's last records at
// open (from its index's last entry to its end): an index interval and a
// record or so. A longer tail is left to the background verification.
const tailCheckBytesMax = 1 << 20

// sealedOpenersMax bounds the goroutines that open sealed segments at
// once. Opening one is a few system calls and small reads, mostly time in
// the kernel: a few at a time keep the processors busy.
const sealedOpenersMax = 8

// sealedOpen is what opening one sealed segment gave.
type sealedOpen struct {
	s       *seg
	indexed bool // opened on its index's head: to verify in the background
	rebuilt bool // scanned, its index missing or wrong and written anew
	err     error
}

// openAllSealed opens the segments at bases, up to sealedOpenersMax at
// once, newest first; segment i must end where bases[i+1] begins (the
// active segment's base, for the last). The result is in bases' order.
func (l *Log) openAllSealed(bases []int64) []sealedOpen {
	out := make([]sealedOpen, len(bases))
	var taken atomic.Int64
	var wg sync.WaitGroup
	for range min(sealedOpenersMax, len(bases)) {
		wg.Go(func() {
			for {
				k := len(bases) - int(taken.Add(1)) // newest first
				if k < 0 {
					return
				}
				next := l.active.base
				if k+1 < len(bases) {
					next = bases[k+1]
				}
				out[k] = l.openOneSealed(bases[k], next)
			}
		})
	}
	wg.Wait()
	return out
}

// sealedTail is what the cheap checks of a sealed segment saw.
type sealedTail struct {
	header segment.Header
	maxTs  int64 // the segment's newest record time (the index's is its last entry's)
}

// sealedByIndex reports whether the sealed segment s may open on its
// index's head ix without a scan: the file is exactly as long as the index
// says, its header names s's base, and its last records (after the last
// entry) decode, follow the entry and end where the index says, at the
// offset it says. What this cannot see, damage inside the segment, the background
// verification finds (verify.go), and every read checks the records it
// returns meanwhile.
func (l *Log) sealedByIndex(s *seg, ix segment.IndexHead) (sealedTail, bool) {
	size, err := s.file.Size()
	if err != nil || size != ix.DataEnd {
		return sealedTail{}, false
	}
	h, ok := l.sealedHeader(s)
	if !ok || h.Base != s.base {
		return sealedTail{}, false
	}
	if ix.Entries == 0 {
		return sealedTail{header: h}, ix.DataEnd == segment.HeaderSize && ix.Next == s.base
	}
	if ix.DataEnd-int64(ix.Last.Pos) > tailCheckBytesMax {
		return sealedTail{header: h, maxTs: ix.Last.MaxTimestamp}, true
	}
	t, ok := l.checkTail(s, ix, h.Flags&segment.HeaderFlagCompacted != 0)
	t.header = h
	return t, ok
}

// readIndexHead reads the head of s's index (segment.ReadIndexHead); ok is
// false when there is no such file or it does not describe s.
func (l *Log) readIndexHead(s *seg) (segment.IndexHead, bool) {
	f, err := l.opts.FS.Open(indexPath(s))
	if err != nil {
		return segment.IndexHead{}, false
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return segment.IndexHead{}, false
	}
	h, err := segment.ReadIndexHead(f, size)
	return h, err == nil && h.Base == s.base
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
func (l *Log) checkTail(s *seg, ix segment.IndexHead, compacted bool) (sealedTail, bool) {
	last := ix.Last
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
