package netio

import (
	"context"
	"sync/atomic"
)

// tracker counts work Stop must wait for: publishes whose answer is not yet
// committed, and deliverer goroutines. Unlike a WaitGroup it may go up
// again from zero while someone waits: work is counted before the stopping
// flag is checked (Server.admit), so a request that slips past the check is
// still waited for.
type tracker struct {
	n    atomic.Int64
	zero chan struct{} // a token each time n reaches 0; capacity 1
}

func newTracker() tracker { return tracker{zero: make(chan struct{}, 1)} }

func (t *tracker) add() { t.n.Add(1) }

func (t *tracker) done() {
	if t.n.Add(-1) == 0 {
		select {
		case t.zero <- struct{}{}:
		default:
		}
	}
}

// wait blocks until no work is counted, or ctx ends.
func (t *tracker) wait(ctx context.Context) error {
	for t.n.Load() > 0 {
		select {
		case <-t.zero:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return nil
}
