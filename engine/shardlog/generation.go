package shardlog

// GenerationEnd returns the offset one past the last record whose
// generation is at most gen: where this log ends for a leader of that
// generation. A replica asks its new leader this to find how much of its
// own log to truncate. Segments opened on their header load their last
// generation, and the one where the generation passes gen its entries
// (index_lazy.go), under the log's lock.
func (l *Log) GenerationEnd(gen uint32) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	list := *l.segs.Load()
	if l.tail != list.last() {
		list = list.with(l.tail) // a rollover the committer has not reached yet
	}
	for _, s := range list {
		m, err := l.metaOf(s)
		if err != nil {
			return s.base // s does not load: its generations are unknown
		}
		if m.lastGen <= gen {
			continue // generations never fall: none later in s
		}
		entries, err := l.entriesOf(s)
		if err != nil {
			return s.base
		}
		for _, e := range entries {
			if e.Generation > gen {
				return s.base + int64(e.RelOffset)
			}
		}
	}
	return l.next
}
