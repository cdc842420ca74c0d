package client

import (
	"context"
	"sync"

	"github.com/felixbroker/felix/netio/wire"
)

// PublishFuture is the outcome of an asynchronous publish: a producer
// sends many without waiting for each acknowledgement, and the broker's
// answers, matched by request id, complete them in whatever order they
// come. Safe for concurrent use; any number of goroutines may wait.
type PublishFuture struct {
	call call
	once sync.Once // the outcome is recorded once: by the completer, or by a failed send
	done chan struct{}
	runs []AckRun
	run1 [1]AckRun // runs' storage when there is one (a single-shard publish): no allocation
	err  error
}

func newFuture() *PublishFuture {
	f := &PublishFuture{done: make(chan struct{})}
	f.call.future = f
	return f
}

// finish records the call's outcome and releases the waiters; called once,
// by the call's completer.
func (f *PublishFuture) finish(cl *call) {
	f.once.Do(func() {
		f.err = cl.err
		if f.err == nil {
			f.runs = appendRuns(f.run1[:0], cl.runs)
		}
		close(f.done)
	})
}

// fail completes the future with err (nil: sent, nothing to wait for),
// unless the completer already did.
func (f *PublishFuture) fail(err error) *PublishFuture {
	f.once.Do(func() {
		f.err = err
		close(f.done)
	})
	return f
}

// Done is closed once the publish is acknowledged or has failed.
func (f *PublishFuture) Done() <-chan struct{} { return f.done }

// Wait waits for the outcome within ctx. ctx ending abandons only the
// wait: the publish itself goes on, and Wait can be called again.
func (f *PublishFuture) Wait(ctx context.Context) ([]AckRun, error) {
	select {
	case <-f.done:
		return f.runs, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Result is the outcome once Done is closed; before, it reports
// ErrNotDone.
func (f *PublishFuture) Result() ([]AckRun, error) {
	select {
	case <-f.done:
		return f.runs, f.err
	default:
		return nil, ErrNotDone
	}
}

// Position is where the first record landed, once Done is closed.
func (f *PublishFuture) Position() (Position, error) {
	runs, err := f.Result()
	if err != nil || len(runs) == 0 {
		return Position{}, err
	}
	return Position{Shard: runs[0].Shard, Offset: runs[0].FirstOffset}, nil
}

// PublishAsync sends one record and returns at once with its future, so a
// producer pipelines without waiting for each acknowledgement. ctx bounds
// only the sending (a dial, a free in-flight slot, room in the write
// buffer); the future's Wait bounds the wait for the answer. Like Publish
// it never resends. value and the key are copied before it returns.
func (c *Client) PublishAsync(ctx context.Context, stream Stream, value []byte, opts ...PublishOption) *PublishFuture {
	sp := specOf(opts, false)
	sc := single(value, sp)
	f := c.sendAsync(ctx, stream, sc, sp)
	putScratch(sc)
	return f
}

// PublishBatchAsync is PublishBatch without the wait.
func (c *Client) PublishBatchAsync(ctx context.Context, stream Stream, records []Record, opts ...PublishOption) *PublishFuture {
	sp := specOf(opts, true)
	if err := batchErr(records, sp); err != nil {
		return newFuture().fail(err)
	}
	sc := batchOf(records)
	f := c.sendAsync(ctx, stream, sc, sp)
	putScratch(sc)
	return f
}

func (c *Client) sendAsync(ctx context.Context, stream Stream, sc *[]wire.Record, sp publishSpec) *PublishFuture {
	f := newFuture()
	if sp.none {
		return f.fail(c.sendPublish(ctx, stream, *sc, sp.ack, nil))
	}
	if err := c.sendPublish(ctx, stream, *sc, sp.ack, &f.call); err != nil {
		return f.fail(err)
	}
	return f
}
