package cache

import "sync/atomic"

// Op names a cache operation counted in OpStats.
type Op uint8

// The operations counted, in the order OpNames lists them.
const (
	OpGet Op = iota
	OpPut
	OpDelete
	OpCounterAdd
	OpCounterGet
	opCount
)

// OpNames are the operations' names, for metric labels.
var OpNames = [opCount]string{"get", "put", "delete", "counter_add", "counter_get"}

// opCounters count the store's operations: one atomic add per call, so the
// hot path pays no lock for them.
type opCounters struct {
	calls [opCount]atomic.Uint64
	hits  atomic.Uint64
}

func (c *opCounters) count(op Op) { c.calls[op].Add(1) }

// OpStats are the operations asked of every cache of a store since it
// opened, refused ones included; Hits counts the gets that found a live
// value.
type OpStats struct {
	Calls [opCount]uint64
	Hits  uint64
}

// OpStats returns the operation counters.
func (s *Store) OpStats() OpStats {
	var st OpStats
	for i := range st.Calls {
		st.Calls[i] = s.ops.calls[i].Load()
	}
	st.Hits = s.ops.hits.Load()
	return st
}
