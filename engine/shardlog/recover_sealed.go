package shardlog

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/felixbroker/felix/segment"
)

// sealedOpenersMax bounds the goroutines that open sealed segments at
// once. Opening one is a few system calls, mostly time in the kernel: a
// few at a time keep the processors busy.
const sealedOpenersMax = 8

// tailCheckBytesMax bounds the read of a sealed segment's last records
// (from its index's last entry to its end) when its meta loads: an index
// interval and a record or so. A longer tail is left to the verifier.
const tailCheckBytesMax = 1 << 20

// sealedOpen is what opening one sealed segment gave.
type sealedOpen struct {
	s       *seg
	lazy    bool // opened on its header and size: to verify in the background
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

// openOnHeader opens the sealed segment s, which must end where the next
// segment begins (next), on what serving it needs: its size (where its
// records end: sealing trimmed it to the last) and its header (its base,
// whether it is compacted). It reads 64 bytes. The rest loads when first
// needed (index_lazy.go); the background verifier checks it all (verify.go)
// and every read checks the records it returns, so damage this cannot see
// is found later, never served. ok is false when the header does not
// stand, or the file is one no sealed segment can be: the caller scans it.
func (l *Log) openOnHeader(s *seg, next int64) (h segment.Header, ok bool) {
	size, err := s.file.Size()
	if err != nil {
		return h, false
	}
	if h, ok = l.sealedHeader(s); !ok || h.Base != s.base {
		return h, false
	}
	s.compacted = h.Flags&segment.HeaderFlagCompacted != 0
	if size == segment.HeaderSize && !s.compacted {
		return h, false // no records, yet the next segment starts later
	}
	s.fillPos, s.fillNext = size, next
	s.lazy.Store(&lazySealed{})
	s.visibleEnd.Store(size)
	return h, true
}

func (l *Log) sealedHeader(s *seg) (segment.Header, bool) {
	b := make([]byte, segment.HeaderSize)
	if _, err := s.file.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
		return segment.Header{}, false
	}
	h, err := segment.DecodeHeader(b)
	return h, err == nil
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

// checkTail reads from the index's last entry to the segment's end and
// checks the records there follow the entry and end where the index says,
// at the offset it says; it returns the newest time it saw.
func (l *Log) checkTail(s *seg, ix segment.IndexHead) (maxTs int64, ok bool) {
	last := ix.Last
	buf := make([]byte, ix.DataEnd-int64(last.Pos))
	if n, err := s.file.ReadAt(buf, int64(last.Pos)); n != len(buf) || err != nil && !errors.Is(err, io.EOF) {
		return 0, false
	}
	maxTs, want := last.MaxTimestamp, s.base+int64(last.RelOffset)
	for at := 0; at < len(buf); {
		r, n, err := segment.DecodeRecord(buf[at:])
		follows := r.Offset == want || s.compacted && at > 0 && r.Offset > want
		if err != nil || !follows || r.Generation != last.Generation {
			return 0, false
		}
		maxTs = max(maxTs, r.Timestamp)
		want, at = r.Offset+1, at+n
	}
	return maxTs, want == ix.Next
}
