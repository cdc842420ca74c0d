package replicated

import (
	"github.com/felixbroker/felix/cluster/replica"
	"github.com/felixbroker/felix/engine"
)

// Led is one replicated stream shard this broker leads now.
type Led struct {
	Stream engine.StreamID
	Index  int
	Leader *replica.Leader
}

// Led lists the replicated stream shards this broker leads now, in no
// order (the metrics' lag gauges). A nil Replicas leads none.
func (r *Replicas) Led() []Led {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Led
	for _, s := range r.shards {
		if l := s.leader.Load(); l != nil {
			out = append(out, Led{Stream: s.stream, Index: s.index, Leader: l})
		}
	}
	return out
}
