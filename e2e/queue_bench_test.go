package e2e

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/group"
	"github.com/felixbroker/felix/engine/shardlog"
)

// The queue benchmarks run the client against a broker in this process
// over loopback, on a memory file system with fsync None for the stream
// and the group logs: the figures are the client, the protocol and the
// server's CPU, not a disk's. Each compares two ways of doing the same work
// in the same run, alternating every queueBenchChunk records (each going
// first in every other chunk) so that drift on a shared machine falls on
// both alike, and reports the ratio. B/op is mostly the memory file
// system growing its files, which a real disk does not do.
const (
	queueBenchValue = 100
	queueBenchBatch = 100
	queueBenchChunk = 10_000
)

// startBenchBroker is a queue broker whose stream and group logs skip
// fsync.
func startBenchBroker(b *testing.B) *queueBroker {
	none := shardlog.None()
	return startQueueBroker(b, engine.Options{Fsync: none}, group.Options{Fsync: &none})
}

// BenchmarkGroupDrainOverLoopback drains b.N records through a consumer
// group (each consumer on its own connection: poll 100, send their ack
// without waiting, poll again, then wait for that ack) and through a plain
// subscription, in the same run: each chunk is read by a subscription
// opened at the chunk's first offset (so it cannot read ahead while the
// group runs) and then by the group. One op is one record, read once by
// each. Reported: records/s of each and group-x-sub, the group's rate over
// the subscription's (goal for one consumer: at least 0.5).
//
// The consumers=1/ack=wait run waits for each ack before polling again
// (two round trips per batch), for comparison.
func BenchmarkGroupDrainOverLoopback(b *testing.B) {
	for _, run := range []struct {
		consumers int
		waitAck   bool
	}{{1, false}, {8, false}, {1, true}} {
		name := fmt.Sprint("consumers=", run.consumers)
		if run.waitAck {
			name += "/ack=wait"
		}
		consumers := run.consumers
		b.Run(name, func(b *testing.B) {
			br := startBenchBroker(b)
			c := br.dial(b, client.WithPingInterval(0))
			s := createStream(b, c, client.StreamConfig{Shards: 1})
			publishBench(b, c, s, b.N)
			gs := make([]*client.Group, consumers)
			for i := range gs {
				gs[i] = br.dial(b, client.WithPingInterval(0)).Group(s, 0, "bench")
			}
			d := &drainers{c: c, stream: s, groups: gs, waitAck: run.waitAck}
			b.ReportAllocs()
			b.SetBytes(2 * queueBenchValue)
			b.ResetTimer()
			for chunk, target := 0, int64(0); target < int64(b.N); chunk++ {
				target = min(target+queueBenchChunk, int64(b.N))
				if chunk%2 == 0 { // each goes first in every other chunk
					d.subTime += d.readSubscription(b, target)
					d.groupTime += d.drainGroup(b, target)
				} else {
					d.groupTime += d.drainGroup(b, target)
					d.subTime += d.readSubscription(b, target)
				}
			}
			b.StopTimer()
			subRate := float64(b.N) / d.subTime.Seconds()
			groupRate := float64(d.groupRead.Load()) / d.groupTime.Seconds()
			b.ReportMetric(subRate, "sub-recs/s")
			b.ReportMetric(groupRate, "group-recs/s")
			b.ReportMetric(groupRate/subRate, "group-x-sub")
		})
	}
}

// publishBench publishes n records of queueBenchValue bytes before the
// clock starts, 16 batches in flight.
func publishBench(b *testing.B, c *client.Client, s client.Stream, n int) {
	recs := make([]client.Record, queueBenchBatch)
	for i := range recs {
		recs[i] = client.Record{Value: make([]byte, queueBenchValue)}
	}
	ctx := testCtx(b)
	window := make([]*client.PublishFuture, 0, 16)
	for left := n; left > 0; left -= queueBenchBatch {
		if len(window) == cap(window) {
			if _, err := window[0].Wait(ctx); err != nil {
				b.Fatal(err)
			}
			window = window[1:]
		}
		window = append(window, c.PublishBatchAsync(ctx, s, recs[:min(left, queueBenchBatch)]))
	}
	for _, f := range window {
		if _, err := f.Wait(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// drainers are the two readers of one run and their totals.
type drainers struct {
	c                  *client.Client
	stream             client.Stream
	subRead            int64
	groups             []*client.Group
	waitAck            bool // wait for each ack before the next poll
	groupRead          atomic.Int64
	subTime, groupTime time.Duration
}

// readSubscription subscribes at the next offset it has not read and
// reads up to target.
func (d *drainers) readSubscription(b *testing.B, target int64) time.Duration {
	ctx := testCtx(b)
	began := time.Now()
	sub, err := d.c.Subscribe(ctx, d.stream, 0, client.SubscribeOptions{Start: client.FromOffset(d.subRead)})
	if err != nil {
		b.Fatal(err)
	}
	for ; d.subRead < target; d.subRead++ {
		if _, err := sub.Next(ctx); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(began)
	_ = sub.Close()
	return elapsed
}

// drainGroup has every consumer poll and ack until the group has handed
// out target records.
func (d *drainers) drainGroup(b *testing.B, target int64) time.Duration {
	began := time.Now()
	var wg sync.WaitGroup
	for _, g := range d.groups {
		wg.Go(func() { d.consume(b, g, target) })
	}
	wg.Wait()
	return time.Since(began)
}

// consume polls and acks until the group has handed out target records.
// Each ack is sent without waiting and waited for after the next poll, so
// the two travel together: one round trip per batch.
func (d *drainers) consume(b *testing.B, g *client.Group, target int64) {
	ctx := context.Background()
	var pending *client.AckFuture
	defer func() {
		if pending != nil {
			if err := pending.Wait(ctx); err != nil {
				b.Error(err)
			}
		}
	}()
	for d.groupRead.Load() < target {
		ms, err := g.Poll(ctx, queueBenchBatch, 0)
		if err != nil {
			b.Error(err)
			return
		}
		if pending != nil {
			if err := pending.Wait(ctx); err != nil {
				b.Error(err)
				return
			}
			pending = nil
		}
		if len(ms) == 0 {
			return // everything published is handed out (or held by the others)
		}
		offsets := make([]int64, len(ms))
		for i, m := range ms {
			offsets[i] = m.Offset
		}
		pending = g.AckAsync(ctx, offsets...)
		if d.waitAck {
			if err := pending.Wait(ctx); err != nil {
				b.Error(err)
				return
			}
			pending = nil
		}
		d.groupRead.Add(int64(len(ms)))
	}
}

// BenchmarkIdempotentPublishOverLoopback publishes batches of 100 records
// of 100 bytes, one batch at a time, through a Producer and through plain
// PublishBatch on the same connection and stream, alternating every
// queueBenchChunk records. One op is one record published by each.
// Reported: records/s of each and idem-x-plain (goal: at least 0.9, that
// is idempotence costs under 10%).
func BenchmarkIdempotentPublishOverLoopback(b *testing.B) {
	br := startBenchBroker(b)
	c := br.dial(b, client.WithPingInterval(0))
	s := createStream(b, c, client.StreamConfig{Shards: 1})
	p := c.Producer(s)
	recs := make([]client.Record, queueBenchBatch)
	for i := range recs {
		recs[i] = client.Record{Value: make([]byte, queueBenchValue)}
	}
	ctx := testCtx(b)
	var plain, idem time.Duration
	b.ReportAllocs()
	b.SetBytes(2 * queueBenchValue)
	b.ResetTimer()
	plainBatch := func(batch []client.Record) error {
		_, err := c.PublishBatch(ctx, s, batch)
		return err
	}
	idemBatch := func(batch []client.Record) error {
		_, err := p.PublishBatch(ctx, 0, batch)
		return err
	}
	for chunk, done := 0, 0; done < b.N; chunk++ {
		n := min(queueBenchChunk, b.N-done)
		if chunk%2 == 0 { // each goes first in every other chunk
			plain += timeBatches(b, n, plainBatch, recs)
			idem += timeBatches(b, n, idemBatch, recs)
		} else {
			idem += timeBatches(b, n, idemBatch, recs)
			plain += timeBatches(b, n, plainBatch, recs)
		}
		done += n
	}
	b.StopTimer()
	plainRate, idemRate := float64(b.N)/plain.Seconds(), float64(b.N)/idem.Seconds()
	b.ReportMetric(plainRate, "plain-recs/s")
	b.ReportMetric(idemRate, "idem-recs/s")
	b.ReportMetric(idemRate/plainRate, "idem-x-plain")
}

// timeBatches publishes n records in batches with publish and returns how
// long it took.
func timeBatches(b *testing.B, n int, publish func([]client.Record) error, recs []client.Record) time.Duration {
	began := time.Now()
	for left := n; left > 0; left -= len(recs) {
		if err := publish(recs[:min(left, len(recs))]); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(began)
}
