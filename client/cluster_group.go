package client

import (
	"context"
	"time"
)

// ClusterGroup is one consumer of a consumer group on one shard of a
// cluster's stream: every call goes to the shard's leader, the one broker
// that serves its groups and holds its claims, following its not_leader
// redirect. The consumer name is fixed when the ClusterGroup is made, so
// claims taken at one broker can be acked after the shard moved. A call
// is sent again only after a failure that proves it was not applied
// (not_leader, shutting_down, a broker that could not be reached); see
// Group for what each call does.
type ClusterGroup struct {
	c        *ClusterClient
	stream   Stream
	shard    int
	name     string
	opts     []GroupOption // the caller's, then WithConsumer(consumer)
	consumer string
}

// Group returns the consumer group name on one shard of stream, as a
// consumer of it. Nothing is sent.
func (c *ClusterClient) Group(stream Stream, shard int, name string, opts ...GroupOption) *ClusterGroup {
	g := &Group{stream: stream, shard: shard, name: name}
	g.apply(opts)
	if g.consumer == "" {
		g.consumer = randomConsumer()
	}
	return &ClusterGroup{c: c, stream: stream, shard: shard, name: name, consumer: g.consumer,
		opts: append(append([]GroupOption(nil), opts...), WithConsumer(g.consumer))}
}

// Consumer is the name this consumer's claims are held under.
func (g *ClusterGroup) Consumer() string { return g.consumer }

// Name is the group's name.
func (g *ClusterGroup) Name() string { return g.name }

// do runs one call at the shard's leader.
func (g *ClusterGroup) do(ctx context.Context, call func(context.Context, *Group) error) error {
	return g.c.run(ctx, toShard(g.stream, g.shard), resendSafe, func(ctx context.Context, cl *Client) error {
		return call(ctx, cl.Group(g.stream, g.shard, g.name, g.opts...))
	})
}

// Poll takes up to max records, waiting up to wait for the first; see
// Group.Poll.
func (g *ClusterGroup) Poll(ctx context.Context, max int, wait time.Duration) ([]Message, error) {
	var out []Message
	err := g.do(ctx, func(ctx context.Context, gr *Group) error {
		var err error
		out, err = gr.Poll(ctx, max, wait)
		return err
	})
	return out, err
}

// Ack finishes records this consumer was handed; see Group.Ack.
func (g *ClusterGroup) Ack(ctx context.Context, offsets ...int64) error {
	return g.do(ctx, func(ctx context.Context, gr *Group) error { return gr.Ack(ctx, offsets...) })
}

// Nack gives records back for redelivery after delay; see Group.Nack.
func (g *ClusterGroup) Nack(ctx context.Context, delay time.Duration, offsets ...int64) error {
	return g.do(ctx, func(ctx context.Context, gr *Group) error { return gr.Nack(ctx, delay, offsets...) })
}

// Extend lengthens this consumer's claims; see Group.Extend.
func (g *ClusterGroup) Extend(ctx context.Context, by time.Duration, offsets ...int64) error {
	return g.do(ctx, func(ctx context.Context, gr *Group) error { return gr.Extend(ctx, by, offsets...) })
}

// Describe reports the group's position and claims; see Group.Describe.
func (g *ClusterGroup) Describe(ctx context.Context) (GroupInfo, error) {
	var info GroupInfo
	err := g.do(ctx, func(ctx context.Context, gr *Group) error {
		var err error
		info, err = gr.Describe(ctx)
		return err
	})
	return info, err
}

// DeadLetters lists the offsets the group gave up on; see
// Group.DeadLetters.
func (g *ClusterGroup) DeadLetters(ctx context.Context, after *int64, limit int) (dead []DeadLetter, more bool, err error) {
	err = g.do(ctx, func(ctx context.Context, gr *Group) error {
		var err error
		dead, more, err = gr.DeadLetters(ctx, after, limit)
		return err
	})
	return dead, more, err
}

// Redrive makes dead offsets owed again; see Group.Redrive.
func (g *ClusterGroup) Redrive(ctx context.Context, offsets ...int64) (redriven uint64, notDead []int64, err error) {
	err = g.do(ctx, func(ctx context.Context, gr *Group) error {
		var err error
		redriven, notDead, err = gr.Redrive(ctx, offsets...)
		return err
	})
	return redriven, notDead, err
}

// AckAsync is Ack without the wait, at the shard's leader; see
// Group.AckAsync. It is sent once: a broker that could not be reached is
// passed over, and the future reports any other failure.
func (g *ClusterGroup) AckAsync(ctx context.Context, offsets ...int64) *AckFuture {
	cl, err := g.c.connect(ctx, g.c.leader(ctx, toShard(g.stream, g.shard)))
	if err != nil {
		f := &AckFuture{n: len(offsets), taken: make(chan struct{}), err: err}
		close(f.taken)
		return f
	}
	return cl.Group(g.stream, g.shard, g.name, g.opts...).AckAsync(ctx, offsets...)
}
