package workload

import (
	"context"
	"errors"
	"strconv"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/client"
)

// Group measures consumer groups on the broker t: a fresh durable
// single-shard stream at s.Fsync (deleted afterwards) is filled with
// s.Count records (GroupRecordsDefault when zero) of s.RecordBytes; one
// plain subscription reads them all from the first (the baseline); then,
// for each count of g.Consumers, a fresh group drains them with that many
// consumers, each on a connection of its own, polling up to s.Batch
// records and acking them (g.SyncAck), until every record was taken or
// s.Duration passes. Latency is a poll with its ack, weighted by the
// records it carried. Params.Extra reports the group's acked and
// redelivered counters. RoleWorkload results named "group", one per
// consumer count, each beside the subscription ("subscription").
func Group(ctx context.Context, t Target, s Spec, g GroupShape) ([]bench.Result, error) {
	s, g, records, err := groupSpec(s, g)
	if err != nil {
		return nil, err
	}
	clients, err := t.dial(ctx, g.most(), fillWindow)
	if err != nil {
		return nil, err
	}
	defer closeAll(clients)
	stream, err := t.createStream(ctx, clients[0], "group", s.Fsync)
	if err != nil {
		return nil, err
	}
	defer deleteStream(clients[0], stream)
	if err := fillStream(ctx, s, clients[0], stream, records); err != nil {
		return nil, err
	}
	sub, err := clients[0].Subscribe(ctx, stream, 0, client.SubscribeOptions{Start: client.FromEarliest(), Buffer: 1 << 14})
	if err != nil {
		return nil, err
	}
	defer sub.Close()
	back := &brokerGroups{ctx: ctx, clients: clients, stream: stream, sync: g.SyncAck}
	rs, err := measureGroups(ctx, s, g, records, back, &brokerSubscription{ctx: ctx, sub: sub}, groupParams(s, g, records))
	for i := range rs {
		rs[i].Machine = t.machineOf()
	}
	return rs, err
}

// Filling a stream: batches of fillBatchRecords (fewer when records are
// large), fillWindow of them in flight.
const (
	fillBatchRecords = 256
	fillWindow       = 8
)

// fillStream publishes records records of s.RecordBytes into stream.
func fillStream(ctx context.Context, s Spec, c *client.Client, stream client.Stream, records int64) error {
	batch := make([]client.Record, max(1, min(fillBatchRecords, batchBytesMax/(s.RecordBytes+recordOverheadBytes))))
	value := pattern(s.RecordBytes)
	for i := range batch {
		batch[i].Value = value
	}
	var window []*client.PublishFuture
	for left := records; left > 0 || len(window) > 0; {
		if left > 0 && len(window) < fillWindow {
			n := min(left, int64(len(batch)))
			window = append(window, c.PublishBatchAsync(ctx, stream, batch[:n]))
			left -= n
			continue
		}
		if _, err := window[0].Wait(ctx); err != nil {
			return err
		}
		window = window[1:]
	}
	return nil
}

// brokerGroups is a group's consumers on the broker, consumer w on
// clients[w]; each keeps its offsets and its ack in flight.
type brokerGroups struct {
	ctx     context.Context
	clients []*client.Client
	stream  client.Stream
	sync    bool
	groups  []*client.Group
	offsets [][]int64
	acks    []*client.AckFuture
}

func (b *brokerGroups) start(name string, consumers int) error {
	b.groups, b.offsets, b.acks = b.groups[:0], b.offsets[:0], make([]*client.AckFuture, consumers)
	for w := range consumers {
		b.groups = append(b.groups, b.clients[w].Group(b.stream, 0, name, client.WithConsumer("consumer-"+strconv.Itoa(w))))
		b.offsets = append(b.offsets, nil)
	}
	return nil
}

func (b *brokerGroups) take(w, max int) (int64, int64, error) {
	g := b.groups[w]
	msgs, err := g.Poll(b.ctx, max, 0)
	if err != nil || len(msgs) == 0 {
		return 0, 0, err
	}
	offsets := b.offsets[w][:0]
	var bytes int64
	for i := range msgs {
		offsets = append(offsets, msgs[i].Offset)
		bytes += int64(len(msgs[i].Value))
	}
	b.offsets[w] = offsets
	if b.sync {
		return int64(len(msgs)), bytes, g.Ack(b.ctx, offsets...)
	}
	if err := b.settle(w); err != nil {
		return 0, 0, err
	}
	b.acks[w] = g.AckAsync(b.ctx, offsets...)
	return int64(len(msgs)), bytes, nil
}

// settle waits for consumer w's ack in flight, if any.
func (b *brokerGroups) settle(w int) error {
	f := b.acks[w]
	if f == nil {
		return nil
	}
	b.acks[w] = nil
	return f.Wait(b.ctx)
}

func (b *brokerGroups) finish() (acked, redelivered uint64, err error) {
	var errs []error
	for w := range b.acks {
		errs = append(errs, b.settle(w))
	}
	if err := errors.Join(errs...); err != nil {
		return 0, 0, err
	}
	info, err := b.groups[0].Describe(b.ctx)
	return info.Acked, info.Redelivered, err
}

// brokerSubscription reads a subscription on the broker.
type brokerSubscription struct {
	ctx context.Context
	sub *client.Subscription
}

func (r *brokerSubscription) next(max int) (records, bytes, missed int64, err error) {
	for records < int64(max) {
		ev, err := r.sub.Next(r.ctx)
		if err != nil {
			return records, bytes, missed, err
		}
		records++
		bytes += int64(len(ev.Value))
		missed += int64(ev.Missed)
	}
	return records, bytes, missed, nil
}
