package sim

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/felixbroker/felix/cluster/replicated"
	"github.com/felixbroker/felix/engine"
)

// partsOf is a broker's engine.PartReplication as its caches see it: the
// shared adapter's, but for Part.Appended, which the simulator's
// goroutine calls (appendedQueue) once every goroutine waits. A cache
// calls Appended right after it hands its record to the log's committer,
// and the leadership's goroutine it wakes would race that committer: it
// ships the record now or at its next tick, as the scheduler runs them.
type partsOf struct {
	reps *replicated.Replicas
	q    *appendedQueue
	b    string
}

func (p partsOf) HoldPart(pl engine.PartLog) (engine.Part, error) {
	part, err := p.reps.HoldPart(pl)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("%s %s/%d part %d", p.b, pl.ID.Name, pl.Shard, pl.Part)
	return &deferredPart{Part: part, q: p.q, key: key}, nil
}

// deferredPart is a held part whose Appended waits for the simulator.
type deferredPart struct {
	engine.Part
	q   *appendedQueue
	key string // its broker, cache, shard and part: the order the queue drains in
}

func (p *deferredPart) Appended() { p.q.add(p) }

// appendedQueue holds the parts whose owner appended, until the
// simulator's goroutine drains it, in key order, after synctest.Wait.
type appendedQueue struct {
	mu    sync.Mutex
	parts map[string]*deferredPart
}

func (q *appendedQueue) add(p *deferredPart) {
	q.mu.Lock()
	if q.parts == nil {
		q.parts = map[string]*deferredPart{}
	}
	q.parts[p.key] = p
	q.mu.Unlock()
}

// drain tells every queued part's leadership to ship, and reports whether
// there was any.
func (q *appendedQueue) drain() bool {
	q.mu.Lock()
	parts := q.parts
	q.parts = nil
	q.mu.Unlock()
	for _, k := range slices.Sorted(maps.Keys(parts)) {
		parts[k].Part.Appended()
	}
	return len(parts) > 0
}
