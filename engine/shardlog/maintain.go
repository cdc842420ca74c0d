package shardlog

import (
	"time"
)

// retentionEvery is how often the background loop applies retention, and
// checkpointEvery how often it records the recovery point when it moved.
const (
	retentionEvery  = 5 * time.Second
	checkpointEvery = time.Second
)

// maintainLoop runs the log's background work: the Periodic fsync (at half
// the interval, so a record is synced within the interval of being written
// unless the fsync itself takes longer), the seals of retired segments and
// the sync ahead the committer asks for (None and Periodic: retire.go), and
// retention.
func (l *Log) maintainLoop() {
	defer close(l.maintainDone)
	syncEvery := time.Duration(0)
	if l.opts.Fsync.Kind == FsyncPeriodic {
		syncEvery = l.opts.Fsync.interval() / 2
	}
	tick := checkpointEvery
	if syncEvery > 0 {
		tick = min(tick, syncEvery)
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	lastRetention, lastCheckpoint := time.Now(), time.Now()
	for {
		select {
		case <-l.stopMaintain:
			return
		case <-l.syncAhead:
			if l.written.Load() > l.durable.Load() {
				if err := l.syncActive(); err != nil {
					l.fail(err)
				}
			}
		case now := <-t.C:
			if syncEvery > 0 && l.written.Load() > l.durable.Load() {
				if err := l.syncActive(); err != nil {
					l.fail(err)
				}
			}
			if now.Sub(lastCheckpoint) >= checkpointEvery {
				lastCheckpoint = now
				l.checkpoint()
			}
			if now.Sub(lastRetention) >= retentionEvery {
				lastRetention = now
				l.ApplyRetention()
			}
		}
	}
}

// Sync makes every record appended before the call durable, whatever the
// FsyncMode, and returns once it is.
func (l *Log) Sync() error {
	l.mu.Lock()
	target := l.next
	l.mu.Unlock()
	if err := l.waitWritten(target); err != nil {
		return err
	}
	if err := l.syncActive(); err != nil {
		l.fail(err) // after a failed fdatasync the page cache cannot be trusted
		return err
	}
	return nil
}

// waitWritten waits until every offset below target is written.
func (l *Log) waitWritten(target int64) error {
	if l.visible.Load() >= target {
		return nil
	}
	cw := chanWaiters.Get().(*chanWaiter)
	defer chanWaiters.Put(cw)
	l.mu.Lock()
	if l.poison != nil {
		err := l.poison
		l.mu.Unlock()
		return err
	}
	if l.visible.Load() >= target {
		l.mu.Unlock()
		return nil
	}
	l.waiters.push(pending{first: target - 1, last: target - 1, w: cw})
	l.kick()
	l.mu.Unlock()
	return <-cw.ch
}

// syncActive seals the retiring segments, then fsyncs the active one and
// moves the durable watermark to what was written before that sync began.
// Earlier segments were synced when they were sealed.
func (l *Log) syncActive() error {
	s, upTo, at, err := l.sealedUpToActive()
	if err != nil || s == nil {
		return err
	}
	if upTo <= l.durable.Load() {
		s.release(l.opts.FS)
		return nil
	}
	began := l.opts.Now()
	err = s.file.Sync()
	s.release(l.opts.FS)
	l.observeSync(l.opts.Now().Sub(began), err)
	if err != nil {
		return &failure{op: "fdatasync", err: err}
	}
	l.wmu.Lock()
	if upTo > l.durable.Load() {
		l.durable.Store(upTo)
		l.durablePoint = at
	}
	l.wmu.Unlock()
	return nil
}

// sealedUpToActive seals every retiring segment and returns the active
// one, with a reference taken (nil when it has none to take), and what was
// written up to it, read while no retired segment waited for its seal: a
// sync of the active segment then covers everything below upTo.
func (l *Log) sealedUpToActive() (s *seg, upTo int64, at point, err error) {
	for {
		if err := l.sealRetired(0); err != nil {
			return nil, 0, point{}, err
		}
		l.wmu.Lock()
		if len(l.retiring) == 0 {
			s, upTo = l.active, l.written.Load()
			if s == nil || !s.acquire() {
				l.wmu.Unlock()
				return nil, 0, point{}, nil
			}
			at = point{base: s.base, pos: s.visibleEnd.Load()}
			l.wmu.Unlock()
			return s, upTo, at, nil
		}
		l.wmu.Unlock() // a rollover retired another segment meanwhile
	}
}

// observeSync counts one fdatasync of a segment and tells the observer.
func (l *Log) observeSync(took time.Duration, err error) {
	l.counters.syncs.Add(1)
	if o := l.opts.Observer; o != nil {
		o.Synced(took, err)
	}
}
