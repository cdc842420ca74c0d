package shardlog

import (
	"github.com/felixbroker/felix/segment"
)

// Append assigns the entries dense offsets and queues them for the
// committer, returning the first offset. It does not wait for the write:
// w (which may be nil) is told when the records are acknowledged at the
// log's FsyncMode, or that they failed. It waits only while the write
// buffer is full (backpressure). Records of one Append are contiguous and
// ordered; Appends are ordered as they take the log's lock.
func (l *Log) Append(entries []Entry, gen uint32, w Waiter) (first int64, err error) {
	return l.append(entries, gen, w, true)
}

// AppendWithoutWake is Append that leaves the committer asleep if it is:
// the caller appends what it has (every frame of one socket read) and then
// calls Wake once, so the committer starts on the whole of it, woken once,
// after the caller is done (a committer woken while the caller goes on
// appending wakes another processor that finds nothing to do). Until Wake,
// the records wait; an append that must wait for buffer room wakes the
// committer itself.
func (l *Log) AppendWithoutWake(entries []Entry, gen uint32, w Waiter) (first int64, err error) {
	return l.append(entries, gen, w, false)
}

// Wake wakes the committer, if it sleeps, for what AppendWithoutWake
// queued. Any goroutine; cheap when the committer is already at work.
func (l *Log) Wake() {
	if l.sched == nil {
		l.work.Signal()
		return
	}
	l.mu.Lock()
	l.kick()
	l.mu.Unlock()
}

// kick starts the flush of what is queued: the committer, or under a
// FlushScheduler the scheduler's next round. Called with mu held.
func (l *Log) kick() {
	if l.sched != nil {
		l.sched.schedule(l)
		return
	}
	l.work.Signal()
}

func (l *Log) append(entries []Entry, gen uint32, w Waiter, wake bool) (first int64, err error) {
	if len(entries) == 0 {
		return 0, ErrEmptyBatch
	}
	size := batchSize(entries)
	l.mu.Lock()
	if err := l.admit(size, gen); err != nil {
		l.mu.Unlock()
		return 0, err
	}
	first = l.next
	l.placeBatch(entries, gen, w, size)
	if wake {
		l.kick()
	}
	l.mu.Unlock()
	return first, nil
}

// AppendWait appends and waits for the acknowledgement.
func (l *Log) AppendWait(entries []Entry, gen uint32) (first int64, err error) {
	cw := chanWaiters.Get().(*chanWaiter)
	first, err = l.Append(entries, gen, cw)
	if err == nil {
		err = <-cw.ch
	}
	chanWaiters.Put(cw)
	return first, err
}

// admit waits until a batch of size bytes fits in the fill buffer. A batch
// larger than the whole buffer goes in alone, growing it.
func (l *Log) admit(size int, gen uint32) error {
	for {
		switch {
		case l.poison != nil:
			return l.poison
		case l.offline.err.Load() != nil:
			return l.Offline() // offline.go
		case l.closing:
			return ErrClosed
		case gen < l.lastGen:
			return ErrStaleGeneration
		case l.fill.empty() || len(l.fill.data)+size <= l.opts.BufferBytes:
			return nil
		}
		l.kick() // the full buffer may hold records appended without a wake
		l.space.Wait()
	}
}

// place frames one record into the fill buffer at the next offset, rolling
// the tail to a new segment when the record does not fit the current one,
// or when the current one is unprepared and a prepared spare is ready. The
// committer creates the new segment's file when it reaches the chunk.
func (l *Log) place(e *Entry, gen uint32, ts int64) {
	size := int64(segment.RecordSize(len(e.Key), len(e.Value)))
	t := l.tail
	if t.fillPos > segment.HeaderSize && (t.fillPos+size > l.opts.SegmentBytes || t.unprepared.Load() && l.prep.spareReady.Load()) {
		t = newSeg(l.opts.Dir, l.next)
		l.tail = t
	}
	c := l.fill.chunkFor(t, t.fillPos)
	pos := t.fillPos
	l.fill.data = segment.AppendRecordParts(l.fill.data, l.next, gen, e.Flags, ts, e.Key, e.Value)
	c.end = len(l.fill.data)
	t.maxTs = max(t.maxTs, ts)
	if t.fillNext == t.base || gen != t.fillGen || pos-t.lastEntryPos >= int64(l.opts.IndexIntervalBytes) {
		t.entries = append(t.entries, segment.IndexEntry{
			RelOffset: uint32(l.next - t.base), Pos: uint32(pos), Generation: gen, MaxTimestamp: t.maxTs,
		})
		t.lastEntryPos = pos
	}
	t.fillPos += size
	t.fillNext = l.next + 1
	t.fillGen = gen
	l.next++
	l.fill.next = l.next
	l.lastGen = gen
}
