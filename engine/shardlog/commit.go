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
	synced, err := l.writeBuffer(b)
	if err != nil {
		l.fail(err)
		return
	}
	l.observeFlush(b, synced, l.opts.Now().Sub(began))
	l.publish(b, synced)
	if !synced {
		l.noteUnsynced(len(b.data))
	}
}

// takeBuffer waits for records and swaps the buffers. ok is false once the
// log is closing and nothing is left to write. While a FlushHere caller
// writes the other buffer (spare is nil), it waits for it.
func (l *Log) takeBuffer() (*buffer, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.fill.empty() || l.spare == nil {
		if l.closing && l.fill.empty() && l.spare != nil {
			return nil, false
		}
		l.work.Wait()
	}
	b := l.fill
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
	l.mu.Unlock()
}

// writeBuffer writes every chunk of b, rolling to a new segment where a
// chunk starts one. Under OnCommit the last write is linked to its
// fdatasync and every earlier chunk was synced by the roll that followed
// it, so synced reports that all of b is durable.
func (l *Log) writeBuffer(b *buffer) (synced bool, err error) {
	onCommit := l.opts.Fsync.Kind == FsyncOnCommit
	for i := range b.chunks {
		c := &b.chunks[i]
		if c.seg.file == nil {
			if err := l.roll(c.seg); err != nil {
				return false, asFailure("rollover", err)
			}
		}
		data := b.data[c.start:c.end]
		if onCommit && i == len(b.chunks)-1 {
			_, err = c.seg.file.WriteAtSync(data, c.pos)
			l.counters.syncs.Add(1)
		} else {
			_, err = c.seg.file.WriteAt(data, c.pos)
		}
		if err != nil {
			return false, &failure{op: "write", err: err}
		}
	}
	return onCommit, nil
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

func asFailure(op string, err error) error {
	if _, ok := err.(*failure); ok {
		return err
	}
	return &failure{op: op, err: err}
}

// publish makes b's records visible and acknowledges their waiters.
func (l *Log) publish(b *buffer, synced bool) {
	l.wmu.Lock()
	for i := range b.chunks {
		c := &b.chunks[i]
		c.seg.visibleEnd.Store(c.pos + int64(c.end-c.start))
	}
	l.written.Store(b.next)
	if synced {
		l.durable.Store(b.next)
		last := b.chunks[len(b.chunks)-1].seg
		l.durablePoint = point{base: last.base, pos: last.visibleEnd.Load()}
	}
	l.visible.Store(b.next)
	l.wmu.Unlock()
	if l.opts.OnVisible != nil {
		l.opts.OnVisible(b.first, b.next, b.data)
	}
	l.mu.Lock()
	l.ready = l.waiters.popThrough(b.next, l.ready[:0])
	l.mu.Unlock()
	l.acks.tell(l.ready, synced)
}

// fail poisons the log after a failed write or sync: every append not yet
// acknowledged fails with err, and so does every later one, until the log
// is reopened from disk. Reads of acknowledged records keep working.
func (l *Log) fail(err error) {
	l.mu.Lock()
	err = l.poisonLocked(err)
	// Its own slice: fail may run on the maintenance goroutine (a failed
	// background sync) while the committer tells l.ready. A failure
	// allocates; nothing else does.
	ready := l.waiters.popAll(nil)
	l.fill.reset(l.next)
	l.space.Broadcast()
	l.mu.Unlock()
	for i := range ready {
		p := &ready[i]
		p.w.Committed(p.first, p.last, err)
	}
}

// poisonLocked makes err the log's poison unless it already has one, and
// returns the poison. Called with mu held.
func (l *Log) poisonLocked(err error) error {
	if l.poison == nil {
		l.poison = err
		l.opts.Logger.Error("shard log failed; appends refused until it is reopened", "dir", l.opts.Dir, "err", err)
	}
	return l.poison
}

func (l *Log) observeFlush(b *buffer, synced bool, took time.Duration) {
	l.counters.flushes.Add(1)
	if o := l.opts.Observer; o != nil {
		o.Flushed(int(b.next-b.first), len(b.data), synced, took)
	}
}
