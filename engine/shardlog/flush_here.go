package shardlog

// FlushHere does the committer's work on the caller's goroutine when it is
// cheap and nothing waits for it: under None or Periodic (no fdatasync
// before the acknowledgement), with the committer idle, at most maxBytes
// queued, and every record bound for a segment whose file is open (no
// rollover). It then writes what is queued to the page cache, publishes
// it and tells its waiters (on the caller's goroutine, with the flush's
// AckBatch, as the committer would), and returns true. Otherwise it
// returns false and changes nothing: the caller wakes the committer.
//
// A caller that appended without waking (AppendWithoutWake) and answers on
// the same goroutine (a connection's event loop, still inside its socket
// read) so has the answers in that read's write: no hand-off to the
// committer and back. Waiters told here must not block nor append, as on
// the committer; the caller must hold nothing a waiter may take.
func (l *Log) FlushHere(maxBytes int) bool {
	if l.opts.Fsync.Kind == FsyncOnCommit {
		return false
	}
	l.mu.Lock()
	if l.spare == nil || l.fill.empty() || len(l.fill.data) > maxBytes || l.closing || l.poison != nil || !l.fill.open() {
		l.mu.Unlock()
		return false
	}
	b := l.fill
	l.fill, l.spare = l.spare, nil
	l.fill.reset(l.next)
	l.space.Broadcast()
	l.mu.Unlock()
	l.flush(b)
	l.mu.Lock()
	b.reset(0)
	l.spare = b
	l.idle.Broadcast()
	if !l.fill.empty() || l.closing {
		l.work.Signal() // the committer may have been woken meanwhile and gone back to wait for spare
	}
	l.mu.Unlock()
	return true
}

// open reports whether every chunk of b goes to a segment whose file is
// open: writing b rolls over to no new segment. Under Log.mu, with the
// committer idle (it opens files only while it holds a buffer).
func (b *buffer) open() bool {
	for i := range b.chunks {
		if b.chunks[i].seg.file == nil {
			return false
		}
	}
	return true
}
