package shardlog

import (
	"time"
)

// commitLoop is the committer: the one goroutine that writes. It takes the
// fill buffer whole (every append queued before it looked), writes it (with
// one linked fdatasync under OnCommit: group commit), publishes the new
// watermark and tells the waiters, while appenders fill the other buffer.
func (l *Log) commitLoop() {
	defer close(l.committerDone)
	for {
		b, ok := l.takeBuffer()
		if !ok {
			return
		}
		l.flush(b)
		l.returnBuffer(b)
	}
}

// flush writes b, publishes its records and tells their waiters: the
// committer's work on one buffer, on whichever goroutine took it (the
// committer, or a FlushHere caller).
func (l *Log) flush(b *buffer) {
	began := l.opts.Now()
	synced, p, err := l.writeBuffer(b)
	if err != nil {
		l.failFlush(b, p, err)
		return
	}
	l.observeFlush(b, synced, l.opts.Now().Sub(began))
	l.publish(b, synced)
	if !synced {
		l.noteUnsynced(len(b.data))
	}
}

// failFlush ends a flush that failed. The chunks it had already written as
// durably as the FsyncMode acknowledges are published and acknowledged, as
// a flush of them alone would have been; then the log is poisoned, telling
// every other waiter whether its bytes may have reached a file.
func (l *Log) failFlush(b *buffer, p progress, err error) {
	if p.done > 0 {
		l.publishChunks(b, p.done, l.opts.Fsync.Kind == FsyncOnCommit)
	}
	l.failFrom(err, b.chunkFirst(p.touched))
}

// takeBuffer waits for records and swaps the buffers. ok is false once the
// log is closing and nothing is left to write. While a FlushHere caller
// writes the other buffer (spare is nil), it waits for it.
func (l *Log) takeBuffer() (*buffer, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.fill.empty() || l.spare == nil || l.sched != nil && !l.committerTurn && !l.closing {
		if l.closing && l.fill.empty() && l.spare != nil {
			return nil, false
		}
		l.work.Wait()
	}
	l.committerTurn = false
	b := l.fill
	l.unqueue(b)
	l.fill, l.spare = l.spare, nil
	l.fill.reset(l.next)
	l.space.Broadcast()
	return b, true
}

func (l *Log) returnBuffer(b *buffer) {
	l.mu.Lock()
	b.reset(0)
	l.spare = b
	l.idle.Broadcast()
	if l.sched != nil {
		// Under a FlushScheduler the committer flushes only what the
		// scheduler hands it: records queued meanwhile go to the next
		// round, and a closing log's committer, waiting for this buffer,
		// drains the rest itself.
		if l.closing {
			l.work.Signal()
		} else if !l.fill.empty() {
			l.sched.schedule(l)
		}
	}
	l.mu.Unlock()
}

// progress is how far a flush got before it failed, in chunks of its
// buffer: the first done were written as durably as the FsyncMode
// acknowledges (under OnCommit, synced by the seal of the rollover that
// followed them; under None and Periodic, written); bytes of the first
// touched may have reached their file; the others were never written.
type progress struct{ done, touched int }

// writeBuffer writes every chunk of b, rolling to a new segment where a
// chunk starts one. Under OnCommit the last write is linked to its
// fdatasync and every earlier chunk was synced by the roll that followed
// it, so synced reports that all of b is durable. On failure p says which
// chunks were written and which may have been.
func (l *Log) writeBuffer(b *buffer) (synced bool, p progress, err error) {
	onCommit := l.opts.Fsync.Kind == FsyncOnCommit
	for i := range b.chunks {
		c := &b.chunks[i]
		if c.seg.file == nil {
			if err := l.retire(); err != nil {
				return false, p, asFailure("rollover", err)
			}
			if onCommit {
				p.done = i // the seal synced every chunk before this one
			}
			if err := l.activate(c.seg); err != nil {
				return false, p, asFailure("rollover", err)
			}
		}
		p.touched = i + 1
		if err := l.writeChunk(b, c, onCommit && i == len(b.chunks)-1); err != nil {
			return false, p, err
		}
		if !onCommit {
			p.done = i + 1
		}
	}
	return onCommit, p, nil
}

// writeChunk writes one chunk of b into its segment, linked to an
// fdatasync when sync is set.
func (l *Log) writeChunk(b *buffer, c *chunk, sync bool) (err error) {
	data := b.data[c.start:c.end]
	if sync {
		_, err = c.seg.file.WriteAtSync(data, c.pos)
		l.counters.syncs.Add(1)
	} else {
		_, err = c.seg.file.WriteAt(data, c.pos)
	}
	if err != nil {
		return &failure{op: "write", err: err}
	}
	return nil
}

// noteUnsynced counts bytes written without a sync and, every
// syncAheadBytes of them, asks the background loop to sync the active
// segment: the rollover's sync of the retired segment then finds little
// left to flush, instead of a whole segment, while appenders wait.
func (l *Log) noteUnsynced(n int) {
	l.unsynced += int64(n)
	if l.unsynced < l.syncAheadBytes() {
		return
	}
	l.unsynced = 0
	l.askSync()
}

// askSync asks the background loop to seal the retiring segments and sync
// the active one, without waiting.
func (l *Log) askSync() {
	select {
	case l.syncAhead <- struct{}{}:
	default: // one is already asked for
	}
}

// syncAheadBytes is an eighth of a segment, and at least syncAheadMin.
func (l *Log) syncAheadBytes() int64 { return max(l.opts.SegmentBytes/8, syncAheadMin) }

// syncAheadMin keeps small test segments from syncing on every flush.
const syncAheadMin = 1 << 20

func asFailure(op string, err error) *failure {
	if f, ok := err.(*failure); ok {
		return f
	}
	return &failure{op: op, err: err}
}

// publish makes b's records visible and acknowledges their waiters.
func (l *Log) publish(b *buffer, synced bool) { l.publishChunks(b, len(b.chunks), synced) }

// publishChunks makes the records of b's first n chunks visible and
// acknowledges their waiters.
func (l *Log) publishChunks(b *buffer, n int, synced bool) {
	next := b.chunkFirst(n)
	l.wmu.Lock()
	for i := range b.chunks[:n] {
		c := &b.chunks[i]
		c.seg.visibleEnd.Store(c.pos + int64(c.end-c.start))
	}
	l.written.Store(next)
	if synced {
		l.durable.Store(next)
		last := b.chunks[n-1].seg
		l.durablePoint = point{base: last.base, pos: last.visibleEnd.Load()}
	}
	l.visible.Store(next)
	l.wmu.Unlock()
	if l.opts.OnVisible != nil {
		l.opts.OnVisible(b.first, next, b.data[:b.chunkStart(n)])
	}
	l.mu.Lock()
	l.ready = l.waiters.popThrough(next, l.ready[:0])
	l.mu.Unlock()
	l.acks.tell(l.ready, synced)
}

// fail poisons the log after a failed write or sync found outside a
// flush: whatever a flush has taken may have been written, what still
// waits in the fill buffer was not.
func (l *Log) fail(err error) { l.failFrom(err, -1) }

// failFrom poisons the log: every append not yet acknowledged fails, and so
// does every later one, until the log is reopened from disk. An append
// whose records start below touched may have had bytes reach a file and is
// told the poison; the others (and every later append) were never written
// and are told its refusal. touched < 0 means the fill buffer's first
// offset. Reads of acknowledged records keep working.
func (l *Log) failFrom(err error, touched int64) {
	l.mu.Lock()
	if touched < 0 {
		touched = l.fill.first
	}
	refusal := l.poisonLocked(err)
	var poison error = asFailure("write", refusal).mayBeWritten()
	// Its own slice: fail may run on the maintenance goroutine (a failed
	// background sync) while the committer tells l.ready. A failure
	// allocates; nothing else does.
	ready := l.waiters.popAll(nil)
	l.unqueue(l.fill)
	l.fill.reset(l.next)
	l.space.Broadcast()
	l.mu.Unlock()
	for i := range ready {
		p := &ready[i]
		told := poison
		if p.first >= touched {
			told = refusal
		}
		p.w.Committed(p.first, p.last, told)
	}
}

// poisonLocked makes err the log's poison unless it already has one, and
// returns the poison. The poison is a refusal (failure.refusal): what every
// append after the failure is told, none of its bytes written. Called with
// mu held.
func (l *Log) poisonLocked(err error) error {
	if l.poison == nil {
		f := asFailure("write", err)
		l.poison = f.refusal()
		l.opts.Logger.Error("shard log failed; appends refused until it is reopened", "dir", l.opts.Dir, "err", f)
	}
	return l.poison
}

func (l *Log) observeFlush(b *buffer, synced bool, took time.Duration) {
	l.counters.flushes.Add(1)
	if o := l.opts.Observer; o != nil {
		o.Flushed(int(b.next-b.first), len(b.data), synced, took)
	}
}
