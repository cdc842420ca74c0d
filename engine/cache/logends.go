package cache

import "fmt"

// LogEnds is where this broker's logs of one shard end: one past the last
// visible record of each.
type LogEnds struct {
	Values   int64
	Counters int64 // 0 while the shard has no counters log
}

// LogEnds returns where this broker's logs of shard i end, whether it
// leads the shard or follows it (a follower's replica appends its
// leader's records), and a channel closed once either moves: so a caller
// waits for a write to reach a replica without polling (look, then wait
// on the channel, and no move is missed). A shard with no log here
// answers as any operation on it does.
func (c *Cache) LogEnds(i int) (LogEnds, <-chan struct{}, error) {
	if i < 0 || i >= len(c.shards) {
		return LogEnds{}, nil, fmt.Errorf("%w: shard %d of %d", ErrNoShard, i, len(c.shards))
	}
	sh := c.held(i)
	if sh == nil {
		return LogEnds{}, nil, c.absent(i)
	}
	sh.endMu.Lock()
	if sh.endMoved == nil {
		sh.endMoved = make(chan struct{})
	}
	moved := sh.endMoved
	sh.endMu.Unlock()
	return LogEnds{Values: sh.log().End(), Counters: sh.counters.end()}, moved, nil
}

// moved closes the channel LogEnds handed out, if any: one of the shard's
// logs moved. It runs on the logs' committers; endMu is a leaf.
func (sh *shard) moved() {
	sh.endMu.Lock()
	if sh.endMoved != nil {
		close(sh.endMoved)
		sh.endMoved = nil
	}
	sh.endMu.Unlock()
}

// end is where the counters log ends, 0 while there is none.
func (cs *counterSlot) end() int64 {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.logs == nil {
		return 0
	}
	return cs.logs.Log().End()
}
