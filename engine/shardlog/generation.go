package shardlog

// GenerationEnd returns the offset one past the last record whose
// generation is at most gen: where this log ends for a leader of that
// generation. A replica asks its new leader this to find how much of its
// own log to truncate.
func (l *Log) GenerationEnd(gen uint32) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	list := *l.segs.Load()
	if l.tail != list.last() {
		list = list.with(l.tail) // a rollover the committer has not reached yet
	}
	for _, s := range list {
		for _, e := range s.entries {
			if e.Generation > gen {
				return s.base + int64(e.RelOffset)
			}
		}
	}
	return l.next
}
