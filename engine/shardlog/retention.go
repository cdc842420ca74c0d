package shardlog

import "math"

// ApplyRetention removes whole sealed segments from the head of the log
// while they are past the retention limits, never the active segment. It
// returns how many segments and bytes it removed. Readers inside a removed
// segment finish their read; the file goes when the last one releases it.
// A segment opened on its header loads its newest time here, once (a few
// small reads, under wmu: index_lazy.go).
func (l *Log) ApplyRetention() (segments int, bytes int64) {
	r := l.opts.Retention
	if r.MaxAge <= 0 && r.MaxBytes <= 0 {
		return 0, 0
	}
	if !l.compaction.mu.TryLock() {
		return 0, 0 // a compaction is swapping segments: next time
	}
	defer l.compaction.mu.Unlock()
	cutoff := l.opts.Now().Add(-r.MaxAge).UnixNano()
	l.wmu.Lock()
	list := *l.segs.Load()
	total := int64(0)
	for _, s := range list {
		total += s.fillPos
	}
	drop := 0
	for drop < len(list)-1 && list[drop].sealed.Load() {
		s := list[drop]
		old := r.MaxAge > 0 && l.newestOf(s) < cutoff
		big := r.MaxBytes > 0 && total > r.MaxBytes
		if !old && !big {
			break
		}
		total -= s.fillPos
		bytes += s.fillPos
		drop++
	}
	if drop == 0 {
		l.wmu.Unlock()
		return 0, 0
	}
	rest := append(segList(nil), list[drop:]...)
	l.segs.Store(&rest)
	l.start.Store(rest[0].base)
	l.wmu.Unlock()
	l.removeRetained(list[:drop], rest[0].base)
	l.counters.retainedSegments.Add(int64(drop))
	l.opts.Logger.Info("retention removed segments", "dir", l.opts.Dir, "segments", drop, "bytes", bytes, "start", rest[0].base)
	return drop, bytes
}

// newestOf is the time of s's newest record; a segment whose meta does not
// load counts as new, so retention keeps it (the verifier or a read will
// find what is wrong with it).
func (l *Log) newestOf(s *seg) int64 {
	m, err := l.metaOf(s)
	if err != nil {
		l.opts.Logger.Warn("retention could not learn a sealed segment's newest time; keeping it", "file", s.path, "err", err)
		return math.MaxInt64
	}
	return m.maxTs
}

// removeRetained lets the segments retention dropped go, their files
// removed as each one's last reader lets go, once the new start is durable
// (startmark.go): a reader can make an older file outlive a newer one, and a
// crash between the two must not leave a gap. When the mark cannot be
// written the files stay until a restart, which finds them whole and keeps
// them as history.
func (l *Log) removeRetained(dropped []*seg, start int64) {
	remove := true
	if err := l.writeStartMark(start); err != nil {
		l.opts.Logger.Warn("retention keeps the removed segments' files until a restart", "dir", l.opts.Dir, "err", err)
		remove = false
	}
	for _, s := range dropped {
		s.removed.Store(remove)
		s.release(l.opts.FS)
	}
}
