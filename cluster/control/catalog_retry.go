package control

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/felixbroker/felix/cluster/store"
)

// A catalog write the store could not answer (store.ErrUnavailable: etcd
// timed a proposal out while its raft leadership moved, which the control
// plane itself causes when it hands that leadership off its own broker)
// may or may not have been applied. The create and the delete try it
// again, after retryFirst and then twice as long each time up to
// retryMax, until their wait ends, and tell "applied, answer lost" from
// "someone else's" by what the key holds:
//
//   - a create whose compare fails after an unanswered try reads the key:
//     the same bytes are its own entry (its Created stamp to the
//     nanosecond and its config), anything else is ErrExists;
//   - a delete whose compare fails after an unanswered try found the name
//     free, which is what it was asked: it reports success, at the
//     revision it read the key absent (the delete is at or before it).
const (
	retryFirst = 50 * time.Millisecond
	retryMax   = time.Second
)

// putAbsent puts value at key if the key is absent, trying again while the
// store is unavailable. It returns the revision that created the key and
// whether it was this put's (false: another entry holds the name).
func (c *Catalog) putAbsent(ctx context.Context, key string, value []byte) (int64, bool, error) {
	put := store.Txn{If: []store.Cmp{store.Absent(key)}, Then: []store.Op{store.Put(key, value)}}
	unanswered := false
	for backoff := retryFirst; ; backoff = min(2*backoff, retryMax) {
		res, err := c.cfg.Store.Txn(ctx, put)
		if err == nil && (res.Succeeded || !unanswered) {
			return res.Revision, res.Succeeded, nil
		}
		if err == nil {
			var kv store.KV
			if kv, _, err = c.cfg.Store.Get(ctx, key); err == nil && kv.Exists() {
				return kv.CreateRevision, bytes.Equal(kv.Value, value), nil
			}
			if err == nil {
				continue // created and deleted since: free again
			}
		}
		if err = c.pauseAfter(ctx, err, backoff); err != nil {
			return 0, false, err
		}
		unanswered = true
	}
}

// deletePresent applies del, whose compare is that a key is present, trying
// again while the store is unavailable. It returns the revision the key
// was gone at, and false when it was absent before any try of this one.
func (c *Catalog) deletePresent(ctx context.Context, del store.Txn) (int64, bool, error) {
	unanswered := false
	for backoff := retryFirst; ; backoff = min(2*backoff, retryMax) {
		res, err := c.cfg.Store.Txn(ctx, del)
		if err == nil {
			return res.Revision, res.Succeeded || unanswered, nil
		}
		if err = c.pauseAfter(ctx, err, backoff); err != nil {
			return 0, false, err
		}
		unanswered = true
	}
}

// pauseAfter returns err unless it is store.ErrUnavailable; then it waits
// d on the catalog's clock and returns nil, or err with why the wait ended
// when ctx ends first.
func (c *Catalog) pauseAfter(ctx context.Context, err error, d time.Duration) error {
	if !errors.Is(err, store.ErrUnavailable) {
		return err
	}
	done := make(chan struct{})
	t := c.cfg.Clock.AfterFunc(d, func() { close(done) })
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%w (tried again until: %v)", err, context.Cause(ctx))
	}
}
