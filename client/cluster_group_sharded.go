package client

import (
	"context"
	"sync"
	"time"
)

// ShardedGroupOptions configure a ShardedGroup. Zero fields take the
// defaults.
type ShardedGroupOptions struct {
	// Batch is the most records one shard's poll asks for (default 100).
	Batch int
	// Wait is how long one shard's poll waits for a record when none is
	// owed (default 5s): an idle shard costs one open request.
	Wait time.Duration
	// Buffer bounds the messages polled but not yet taken by Next, over
	// every shard (default Batch). A shard's loop polls again only when
	// its last batch is all in the buffer, so claims are not taken far
	// ahead of the reader (they lapse while they wait).
	Buffer int
	// Group are the options of each shard's group (WithConsumer,
	// WithClaim); every shard's consumer has the same name.
	Group []GroupOption
}

// ShardedGroup is one consumer of a consumer group over every shard of a
// stream: one poll loop per shard, each at that shard's leader (a group
// is bound to one shard), merged behind one Next. Messages carry their
// shard, and Ack and Nack take them back to the shard they came from.
// Delivery is at least once, as a Group's: a poll whose answer was lost
// is polled again, and what it had claimed is owed again once the claims
// lapse.
//
// Next is for one reader at a time; Ack, Nack, Extend and Close are safe
// from any goroutine. Closing the ClusterClient ends the polls too (with
// ErrClosed), but only Close waits for them.
type ShardedGroup struct {
	stream Stream
	name   string
	groups []*ClusterGroup
	msgs   chan Message
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu  sync.Mutex // guards err
	err error      // what ended it
}

// Defaults of ShardedGroupOptions.
const (
	DefaultGroupBatch = 100
	DefaultGroupWait  = 5 * time.Second
)

// ShardedGroup joins the group name on every shard of stream, as one
// consumer, and starts polling each shard.
func (c *ClusterClient) ShardedGroup(ctx context.Context, stream Stream, name string, opts ShardedGroupOptions) (*ShardedGroup, error) {
	info, err := c.DescribeStream(ctx, stream)
	if err != nil {
		return nil, err
	}
	if opts.Batch <= 0 {
		opts.Batch = DefaultGroupBatch
	}
	if opts.Wait <= 0 {
		opts.Wait = DefaultGroupWait
	}
	if opts.Buffer <= 0 {
		opts.Buffer = opts.Batch
	}
	g := &ShardedGroup{stream: stream, name: name, msgs: make(chan Message, opts.Buffer)}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	one := append(append([]GroupOption(nil), opts.Group...), WithConsumer(c.Group(stream, 0, name, opts.Group...).Consumer()))
	for shard := range len(info.Shards) {
		g.groups = append(g.groups, c.Group(stream, shard, name, one...))
	}
	for _, sg := range g.groups {
		g.wg.Add(1)
		go g.poll(sg, opts, c.opts.clock, c.opts.retry.withDefaults(), c.opts.randN)
	}
	return g, nil
}

// poll is one shard's loop: poll, hand the batch over, poll again. A
// failure another poll can fix is waited out with the policy's backoff;
// one it cannot ends the ShardedGroup.
func (g *ShardedGroup) poll(sg *ClusterGroup, opts ShardedGroupOptions, clk clock, p RetryPolicy, randN func(int64) int64) {
	defer g.wg.Done()
	failures := 0
	for g.ctx.Err() == nil {
		ms, err := sg.Poll(g.ctx, opts.Batch, opts.Wait)
		if err != nil {
			if g.ctx.Err() != nil {
				return
			}
			if !Retryable(err) {
				g.end(&ShardError{Shard: sg.shard, Err: err})
				return
			}
			failures++
			if clk.Sleep(g.ctx, p.Backoff(min(failures, 32), randN)) != nil {
				return
			}
			continue
		}
		failures = 0
		for _, m := range ms {
			select {
			case g.msgs <- m:
			case <-g.ctx.Done():
				return
			}
		}
	}
}

func (g *ShardedGroup) end(err error) {
	g.mu.Lock()
	if g.err == nil {
		g.err = err
	}
	g.mu.Unlock()
	g.cancel()
}

// Consumer is the name this consumer's claims are held under, on every
// shard.
func (g *ShardedGroup) Consumer() string { return g.groups[0].Consumer() }

// Next waits for the next message of any shard, within ctx. Once the
// ShardedGroup has ended it returns what ended it (a *ShardError, or
// ErrClosed after Close).
func (g *ShardedGroup) Next(ctx context.Context) (Message, error) {
	select {
	case m := <-g.msgs:
		return m, nil
	default:
	}
	select {
	case m := <-g.msgs:
		return m, nil
	case <-g.ctx.Done():
		g.mu.Lock()
		defer g.mu.Unlock()
		return Message{}, g.err
	case <-ctx.Done():
		return Message{}, ctx.Err()
	}
}

// Ack finishes messages this consumer was handed, each at its shard's
// group; see Group.Ack. The first shard's failure is returned, after
// every shard was tried.
func (g *ShardedGroup) Ack(ctx context.Context, msgs ...Message) error {
	return g.each(msgs, func(sg *ClusterGroup, offsets []int64) error { return sg.Ack(ctx, offsets...) })
}

// Nack gives messages back for redelivery after delay; see Group.Nack.
func (g *ShardedGroup) Nack(ctx context.Context, delay time.Duration, msgs ...Message) error {
	return g.each(msgs, func(sg *ClusterGroup, offsets []int64) error { return sg.Nack(ctx, delay, offsets...) })
}

// Extend lengthens this consumer's claims on messages; see Group.Extend.
func (g *ShardedGroup) Extend(ctx context.Context, by time.Duration, msgs ...Message) error {
	return g.each(msgs, func(sg *ClusterGroup, offsets []int64) error { return sg.Extend(ctx, by, offsets...) })
}

// each calls do once per shard the messages came from, with their offsets.
func (g *ShardedGroup) each(msgs []Message, do func(*ClusterGroup, []int64) error) error {
	byShard := map[int][]int64{}
	for _, m := range msgs {
		byShard[m.Shard] = append(byShard[m.Shard], m.Offset)
	}
	var first error
	for shard, offsets := range byShard {
		if int(shard) >= len(g.groups) {
			if first == nil {
				first = &ShardError{Shard: shard, Err: ErrInvalidArgument}
			}
			continue
		}
		if err := do(g.groups[shard], offsets); err != nil && first == nil {
			first = &ShardError{Shard: shard, Err: err}
		}
	}
	return first
}

// Shard is the one-shard consumer of shard, for what the ShardedGroup
// does not offer (Describe, DeadLetters, Redrive).
func (g *ShardedGroup) Shard(shard int) *ClusterGroup { return g.groups[shard] }

// Shards is the stream's shard count.
func (g *ShardedGroup) Shards() int { return len(g.groups) }

// Close stops every shard's polling; records claimed and not yet acked
// are owed again when their claims lapse. Next then returns ErrClosed.
func (g *ShardedGroup) Close() error {
	g.end(ErrClosed)
	g.wg.Wait()
	return nil
}
