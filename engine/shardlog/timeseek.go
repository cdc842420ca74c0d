package shardlog

import (
	"errors"
	"sort"

	"github.com/felixbroker/felix/segment"
)

// timeScanBytes is what one read of the scan after a time seek asks for:
// the record sought lies within about one index interval of where the
// index points.
const timeScanBytes = 16 << 10

// OffsetForTime returns the offset of the first record from Start on whose
// timestamp is at or after ts, leaving out control records (which no
// subscriber sees); End when there is none. Timestamps need not increase:
// the answer is the first such record in offset order.
//
// It never reads the whole log. Each segment's newest time (its meta, or
// the tail's running maximum) says which segment holds the record: every
// record of the segments before it is older than ts. A binary search of
// that segment's sparse index, whose entries carry the largest timestamp
// so far, finds the entry before the first one that reaches ts, and a
// scan from there finds the record, normally within one index interval.
// Safe from any goroutine; the IO errors and damage are Read's.
func (l *Log) OffsetForTime(ts int64) (int64, error) {
	from, err := l.seekTime(ts)
	if err != nil {
		return 0, err
	}
	return l.scanForTime(from, ts)
}

// seekTime returns an offset at or before the first record whose
// timestamp is at or after ts, and after every record of the segments
// whose newest time is older than ts.
func (l *Log) seekTime(ts int64) (int64, error) {
	for _, s := range *l.segs.Load() {
		if !s.acquire() {
			continue // retention removed it: its records lie before Start
		}
		from, found, err := l.seekTimeIn(s, ts)
		s.release(l.opts.FS)
		if err != nil || found {
			return from, err
		}
	}
	return l.End(), nil
}

// seekTimeIn searches one segment: found is false when every record of it
// is older than ts.
func (l *Log) seekTimeIn(s *seg, ts int64) (from int64, found bool, err error) {
	newest, entries, err := l.timesOf(s, ts)
	if err != nil || newest < ts {
		return 0, false, err
	}
	i := sort.Search(len(entries), func(i int) bool { return entries[i].MaxTimestamp >= ts })
	if i == 0 {
		return s.base, true, nil
	}
	return s.base + int64(entries[i-1].RelOffset), true, nil
}

// timesOf returns s's newest record time and, when that reaches ts, its
// index entries: a sealed segment's from its meta and index (which may
// load first, index_lazy.go), the tail's under mu.
func (l *Log) timesOf(s *seg, ts int64) (newest int64, entries []segment.IndexEntry, err error) {
	if s.sealed.Load() {
		m, err := l.metaOf(s)
		if err != nil || m.maxTs < ts {
			return m.maxTs, nil, err
		}
		entries, err = l.entriesOf(s)
		return m.maxTs, entries, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return s.maxTs, s.entries, nil
}

// scanForTime reads from offset from (or Start, if retention passed it)
// to the first record, not a control one, whose timestamp is at or after
// ts; End when none is.
func (l *Log) scanForTime(from, ts int64) (int64, error) {
	var buf []byte
	for {
		from = max(from, l.Start())
		out, next, err := l.Read(from, timeScanBytes, buf[:0])
		if errors.Is(err, ErrBelowStart) {
			continue // retention moved Start while we read: start there
		}
		if err != nil {
			return 0, err
		}
		if next <= from {
			return from, nil // at End
		}
		it := segment.NewIter(out)
		for r, ok := it.Next(); ok; r, ok = it.Next() {
			if r.Flags&segment.FlagControl == 0 && r.Timestamp >= ts {
				return r.Offset, nil
			}
		}
		if err := it.Err(); err != nil {
			return 0, err
		}
		from, buf = next, out
	}
}

// Times returns the timestamp of the oldest record held that is not a
// control record, and the newest timestamp of the log (the largest of any
// record placed, as the index keeps it); 0 for either when there is none.
// It reads the first records from Start and each segment's meta from the
// newest back to the first that holds a record: no scan of the log.
func (l *Log) Times() (first, newest int64, err error) {
	if first, err = l.firstTime(); err != nil {
		return 0, 0, err
	}
	list := *l.segs.Load()
	for i := len(list) - 1; i >= 0 && newest == 0; i-- {
		s := list[i]
		if !s.acquire() {
			break // retention removed it, and so the ones before it
		}
		newest, _, err = l.timesOf(s, 1<<63-1)
		s.release(l.opts.FS)
		if err != nil {
			return 0, 0, err
		}
	}
	return first, newest, nil
}

func (l *Log) firstTime() (int64, error) {
	var buf []byte
	for from := l.Start(); ; {
		out, next, err := l.Read(from, timeScanBytes, buf[:0])
		if errors.Is(err, ErrBelowStart) {
			from = l.Start()
			continue
		}
		if err != nil || next <= from {
			return 0, err
		}
		it := segment.NewIter(out)
		for r, ok := it.Next(); ok; r, ok = it.Next() {
			if r.Flags&segment.FlagControl == 0 {
				return r.Timestamp, nil
			}
		}
		from, buf = next, out
	}
}
