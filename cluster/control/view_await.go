package control

import (
	"context"

	"github.com/felixbroker/felix/cluster"
)

// AwaitObject returns the object's catalog entry once this view holds it
// and, with placed, an assignment placed for that entry's incarnation for
// every one of its shards: from then on Holds and Leader answer for the
// object. It ends with ctx (its cause) or the view's Close (ErrClosed).
//
// It waits on what the view holds, not on a store revision: the store
// sends no progress notifications, so a view learns revisions only from
// the changes under Root, and a revision of anything else (a write that
// changed nothing it watches) might never be reached.
func (v *View) AwaitObject(ctx context.Context, id cluster.ObjectID, placed bool) (Entry, error) {
	var e Entry
	err := v.await(ctx, func(st *viewState) bool {
		got, ok := st.objects[id]
		if !ok || placed && !st.placed(got) {
			return false
		}
		e = got.clone()
		return true
	})
	return e, err
}

// awaitPlaced waits until the view holds the object at incarnation inc,
// placed: what a create's caller needs before it asks Holds.
func (v *View) awaitPlaced(ctx context.Context, id cluster.ObjectID, inc int64) error {
	return v.await(ctx, func(st *viewState) bool {
		e, ok := st.objects[id]
		return ok && e.Incarnation == inc && st.placed(e)
	})
}

// awaitRevision waits until the view has read the store up to rev. Only
// for the revision of a write under Root that succeeded: the view sees
// that write's own change (or a later state read whole) and so gets there.
func (v *View) awaitRevision(ctx context.Context, rev int64) error {
	return v.await(ctx, func(st *viewState) bool { return st.revision >= rev })
}

// await waits until cond holds of the state, called read-locked after
// every change. The owners index is published under the same write lock
// as the state it indexes, so once cond holds Holds and Leader answer for
// that state (or a later one).
func (v *View) await(ctx context.Context, cond func(*viewState) bool) error {
	closed := false
	for {
		v.mu.RLock()
		changed, ok := v.changed, cond(&v.state)
		v.mu.RUnlock()
		switch {
		case ok:
			return nil
		case closed:
			return ErrClosed
		}
		select {
		case <-changed:
		case <-v.done:
			closed = true // what it applied last is read once more
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// placed reports whether every shard of e has an assignment placed for
// e's incarnation.
func (st *viewState) placed(e Entry) bool {
	spec := e.Spec()
	for i := range spec.Shards {
		a, ok := st.shards[cluster.ShardID{Object: e.Object, Shard: i}]
		if !ok || a.Assignment.Incarnation != e.Incarnation {
			return false
		}
	}
	return true
}
