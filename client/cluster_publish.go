package client

import (
	"context"
)

// Publish appends one record, at its shard's leader when the client knows
// it (else at the broker in use, which forwards it), and waits for the
// acknowledgement. It is the contract's publish: it passes over brokers
// that cannot be reached, but the record leaves once. A failure after it
// left (ErrConnectionLost, an ambiguous code, a not_leader) is returned as
// is, and the next publish goes where the failure says; PublishAtLeastOnce
// is the variant that resends.
//
// On the steady path (the leader's connection up) it allocates nothing.
func (c *ClusterClient) Publish(ctx context.Context, stream Stream, value []byte, opts ...PublishOption) (Position, error) {
	t := c.publishTarget(ctx, stream, specOf(opts, false).key)
	if cl := c.routed(t); cl != nil {
		pos, err := cl.Publish(ctx, stream, value, opts...)
		if err != nil {
			c.learn(t, &fromBroker{addr: cl.addr, err: err})
		}
		return pos, err
	}
	var pos Position
	err := c.run(ctx, t, resendNever, func(ctx context.Context, cl *Client) error {
		var err error
		pos, err = cl.Publish(ctx, stream, value, opts...)
		return err
	})
	return pos, err
}

// PublishBatch appends records in one request, at the leader of their
// shard when they all choose one, else at the broker in use, which splits
// and forwards them. Like Publish it never resends.
func (c *ClusterClient) PublishBatch(ctx context.Context, stream Stream, records []Record, opts ...PublishOption) ([]AckRun, error) {
	t := c.batchTarget(ctx, stream, records)
	var runs []AckRun
	err := c.run(ctx, t, resendNever, func(ctx context.Context, cl *Client) error {
		var err error
		runs, err = cl.PublishBatch(ctx, stream, records, opts...)
		return err
	})
	return runs, err
}

// PublishAtLeastOnce is Publish that resends under the RetryPolicy, at
// whichever broker the last failure pointed to: the contract's
// publish_at_least_once. A failure whose outcome was unknown is resent
// too, so the record can land twice. A failure no attempt can fix
// (forbidden, unauthenticated, an oversized or malformed request) is
// returned at once.
func (c *ClusterClient) PublishAtLeastOnce(ctx context.Context, stream Stream, value []byte, opts ...PublishOption) (Position, error) {
	t := c.publishTarget(ctx, stream, specOf(opts, false).key)
	var pos Position
	err := c.run(ctx, t, resendAny, func(ctx context.Context, cl *Client) error {
		var err error
		pos, err = cl.Publish(ctx, stream, value, opts...)
		return err
	})
	return pos, err
}

// PublishBatchAtLeastOnce is PublishBatch that resends, as
// PublishAtLeastOnce; a resent batch may land twice.
func (c *ClusterClient) PublishBatchAtLeastOnce(ctx context.Context, stream Stream, records []Record, opts ...PublishOption) ([]AckRun, error) {
	t := c.batchTarget(ctx, stream, records)
	var runs []AckRun
	err := c.run(ctx, t, resendAny, func(ctx context.Context, cl *Client) error {
		var err error
		runs, err = cl.PublishBatch(ctx, stream, records, opts...)
		return err
	})
	return runs, err
}

// PublishAsync is Publish without the wait, at the same broker Publish
// would choose: the future completes with the acknowledgement or the
// failure, and nothing is resent.
func (c *ClusterClient) PublishAsync(ctx context.Context, stream Stream, value []byte, opts ...PublishOption) *PublishFuture {
	t := c.publishTarget(ctx, stream, specOf(opts, false).key)
	cl := c.routed(t)
	if cl == nil {
		var err error
		if cl, err = c.connect(ctx, c.leader(ctx, t)); err != nil {
			return newFuture().fail(err)
		}
	}
	return cl.PublishAsync(ctx, stream, value, opts...)
}

// PublishBatchAsync is PublishBatch without the wait, as PublishAsync.
func (c *ClusterClient) PublishBatchAsync(ctx context.Context, stream Stream, records []Record, opts ...PublishOption) *PublishFuture {
	t := c.batchTarget(ctx, stream, records)
	cl := c.routed(t)
	if cl == nil {
		var err error
		if cl, err = c.connect(ctx, c.leader(ctx, t)); err != nil {
			return newFuture().fail(err)
		}
	}
	return cl.PublishBatchAsync(ctx, stream, records, opts...)
}

// publishTarget is where a record with key goes: its shard's leader when
// the shard count is known, else the broker in use.
func (c *ClusterClient) publishTarget(ctx context.Context, stream Stream, key []byte) target {
	n := c.shardCount(ctx, streamObject(stream))
	if n == 0 {
		return anyBroker
	}
	return toShard(stream, ShardFor(key, n))
}

// batchTarget is the leader of the one shard every record chooses, or the
// broker in use when they choose several (it splits the batch).
func (c *ClusterClient) batchTarget(ctx context.Context, stream Stream, records []Record) target {
	n := c.shardCount(ctx, streamObject(stream))
	if n == 0 || len(records) == 0 {
		return anyBroker
	}
	shard := ShardFor(records[0].Key, n)
	for i := 1; i < len(records); i++ {
		if ShardFor(records[i].Key, n) != shard {
			return anyBroker
		}
	}
	return toShard(stream, shard)
}
