package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// watchBatchEventsMax bounds the events one Next returns; a batch ends at
// a revision boundary once it holds this many (one revision is never split).
const watchBatchEventsMax = 1024

// Watch implements Store.
func (s *Memory) Watch(ctx context.Context, prefix string, fromRev int64) (Watch, error) {
	if fromRev < 1 {
		return nil, fmt.Errorf("%w: a watch from revision %d (at least 1)", ErrInvalid, fromRev)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.beginLocked(ctx); err != nil {
		return nil, err
	}
	return &memWatch{store: s, ctx: ctx, prefix: prefix, next: fromRev, done: make(chan struct{})}, nil
}

// memWatch reads the store's history from a cursor: it holds no events of
// its own and needs no goroutine, so a slow reader costs nothing until the
// history it still needs is compacted away.
type memWatch struct {
	store  *Memory
	ctx    context.Context
	prefix string
	next   int64 // the next revision to deliver (guarded by store.mu)
	err    error // sticky once set (guarded by store.mu)

	closeOnce sync.Once
	done      chan struct{}
}

func (w *memWatch) Next(ctx context.Context) ([]Event, error) {
	for {
		events, changed, err := w.poll()
		if err != nil || len(events) > 0 {
			return events, err
		}
		select {
		case <-changed:
		case <-w.done:
		case <-w.ctx.Done():
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (w *memWatch) Close() { w.closeOnce.Do(func() { close(w.done) }) }

// poll returns the events due, or the channel to wait on for more.
func (w *memWatch) poll() ([]Event, <-chan struct{}, error) {
	s := w.store
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.err == nil {
		w.err = w.endLocked()
	}
	if w.err != nil {
		return nil, nil, w.err
	}
	return w.collectLocked(), s.changed, nil
}

// endLocked says why the watch cannot go on, if it cannot. Leases due by
// now expire first, so the watch sees the state at now, as reads do.
func (w *memWatch) endLocked() error {
	s := w.store
	select {
	case <-w.done:
		return ErrClosed
	default:
	}
	if err := s.beginLocked(w.ctx); err != nil {
		return err
	}
	if w.next < s.compacted {
		return fmt.Errorf("%w: a watch at revision %d, history compacted below %d", ErrCompacted, w.next, s.compacted)
	}
	return nil
}

// collectLocked takes the events under the prefix from the cursor on, at
// most a batch, and moves the cursor past what it looked at.
func (w *memWatch) collectLocked() []Event {
	s := w.store
	h := s.history
	i, _ := slices.BinarySearchFunc(h, w.next, byRevision)
	var events []Event
	for ; i < len(h); i++ {
		if len(events) >= watchBatchEventsMax && h[i].Revision() != h[i-1].Revision() {
			w.next = h[i].Revision()
			return events
		}
		if strings.HasPrefix(h[i].KV.Key, w.prefix) {
			events = append(events, cloneEvent(h[i]))
		}
	}
	w.next = max(w.next, s.rev+1)
	return events
}

func cloneEvent(e Event) Event {
	e.KV = cloneKV(e.KV)
	return e
}
