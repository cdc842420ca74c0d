package client

import (
	"context"
	"errors"
	"strconv"
)

// Subscribe reads one shard of a stream at its leader: it goes where the
// client's routes say, follows a not_leader redirect to the broker it
// names, and tries again under the RetryPolicy while the shard has no
// leader that serves (not_found is retried: a broker promoted a moment
// ago may not have opened the shard yet). The Subscription is the
// single-broker one; when it ends (its broker lost, the shard moved) it
// is the caller's to open again from ResumeOffset, or SubscribeSharded's.
func (c *ClusterClient) Subscribe(ctx context.Context, stream Stream, shard int, opts SubscribeOptions) (*Subscription, error) {
	var sub *Subscription
	err := c.run(ctx, toShard(stream, shard), resendAny, func(ctx context.Context, cl *Client) error {
		var err error
		sub, err = cl.Subscribe(ctx, stream, shard, opts)
		return err
	})
	if err != nil {
		return nil, &ShardError{Shard: shard, Err: err}
	}
	return sub, nil
}

// ShardError is a failure of one shard of a sharded operation: the shard
// a SubscribeSharded could not open or re-establish.
type ShardError struct {
	Shard int
	Err   error
}

func (e *ShardError) Error() string {
	return "felix/client: shard " + strconv.Itoa(e.Shard) + ": " + e.Err.Error()
}

// Unwrap returns the shard's failure.
func (e *ShardError) Unwrap() error { return e.Err }

// resumable reports whether a subscription that ended with err can be
// opened again from its ResumeOffset: its broker was lost, the shard
// moved or has no serving leader yet, the broker ended it for falling
// behind. Not after Close, nor a refusal no attempt can fix.
func resumable(err error) bool {
	return !errors.Is(err, ErrClosed) && !errors.Is(err, ErrEndReached) && Retryable(err)
}
