package client

import (
	"context"
	"errors"
	"iter"
	"sync"
)

// ClusterWatch is a cache watch over a cluster: a Watch at the key's
// owner (following its redirect) that, when it ends for a reason another
// attempt can fix (its broker lost, the shard moved, the broker shutting
// down), is opened again at the owner from its ResumeOffset, so nothing
// is missed and nothing delivered twice. A watch the broker ended because
// the cache was dropped (ErrNotFound), or that could not be opened again
// within the RetryPolicy, ends with that error. A retained watch is
// opened again as a plain one resuming where it was: its snapshot is not
// sent twice.
//
// Next and Events are for one reader at a time; Close and the accessors
// are safe from any goroutine.
type ClusterWatch struct {
	ca   *ClusterCache
	key  []byte
	opts []WatchOption // the caller's, for a watch opened again

	mu       sync.Mutex // guards the fields below
	w        *Watch
	reopened uint64
	closed   bool
}

func (ca *ClusterCache) openWatch(ctx context.Context, key []byte, retained bool, opts []WatchOption) (*ClusterWatch, error) {
	w, err := ca.watch(ctx, ca.watchTarget(ctx, key, opts), func(ctx context.Context, c *Cache) (*Watch, error) {
		if retained {
			return c.WatchRetained(ctx, key, opts...)
		}
		return c.Watch(ctx, key, opts...)
	})
	if err != nil {
		return nil, err
	}
	return &ClusterWatch{ca: ca, key: append([]byte(nil), key...), opts: opts, w: w}, nil
}

// Next waits for the next event, within ctx, opening the watch again
// after an end another attempt can fix. Once it has ended for good it
// returns a *WatchEndedError, or ErrClosed after Close.
func (cw *ClusterWatch) Next(ctx context.Context) (WatchEvent, error) {
	for {
		cw.mu.Lock()
		w, closed := cw.w, cw.closed
		cw.mu.Unlock()
		if closed {
			return WatchEvent{}, ErrClosed
		}
		ev, err := w.Next(ctx)
		var end *WatchEndedError
		if err == nil || !errors.As(err, &end) || !reopenable(end) {
			return ev, err
		}
		if rerr := cw.reopen(ctx, end.ResumeOffset); rerr != nil {
			return WatchEvent{}, &WatchEndedError{Cache: end.Cache, Key: end.Key, ResumeOffset: end.ResumeOffset, Err: rerr}
		}
	}
}

// reopenable: the watch ended for a reason a new one can get past; not a
// dropped cache, a lag the caller asked to see, or a close.
func reopenable(end *WatchEndedError) bool {
	return !errors.Is(end, ErrNotFound) && !errors.Is(end, ErrCacheWatchLagged) && !errors.Is(end, ErrClosed) && Retryable(end.Err)
}

// reopen opens the watch again from offset, at the key's owner.
func (cw *ClusterWatch) reopen(ctx context.Context, offset int64) error {
	opts := append(append([]WatchOption(nil), cw.opts...), WithResumeAt(offset))
	w, err := cw.ca.watch(ctx, cw.ca.watchTarget(ctx, cw.key, opts), func(ctx context.Context, c *Cache) (*Watch, error) {
		return c.Watch(ctx, cw.key, opts...)
	})
	if err != nil {
		return err
	}
	cw.mu.Lock()
	defer cw.mu.Unlock()
	if cw.closed {
		_ = w.Close()
		return ErrClosed
	}
	_ = cw.w.Close()
	cw.w = w
	cw.reopened++
	return nil
}

// Events iterates the watch's events, as Watch.Events does.
func (cw *ClusterWatch) Events(ctx context.Context) iter.Seq2[WatchEvent, error] {
	return func(yield func(WatchEvent, error) bool) {
		for {
			ev, err := cw.Next(ctx)
			if err != nil {
				yield(WatchEvent{}, err)
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

func (cw *ClusterWatch) current() *Watch {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	return cw.w
}

// ResumeOffset is where a new watch (WithResumeAt) would pick up; see
// Watch.ResumeOffset.
func (cw *ClusterWatch) ResumeOffset() int64 { return cw.current().ResumeOffset() }

// Shard is the shard the watch reads; Shards the cache's shard count.
func (cw *ClusterWatch) Shard() int { return cw.current().Shard() }

// Shards is the cache's number of shards, as the broker reported it.
func (cw *ClusterWatch) Shards() int { return cw.current().Shards() }

// Reopened counts the times the watch was opened again.
func (cw *ClusterWatch) Reopened() uint64 {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	return cw.reopened
}

// Close ends the watch. Closing twice is harmless.
func (cw *ClusterWatch) Close() error {
	cw.mu.Lock()
	cw.closed = true
	w := cw.w
	cw.mu.Unlock()
	return w.Close()
}
