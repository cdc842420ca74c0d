package workload

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/client"
)

// drainTimeout bounds how long subscribers may take, after the last
// publish was acknowledged, to receive what was published.
const drainTimeout = 30 * time.Second

// E2E measures publish-to-delivery latency: s.Subscribers subscriptions
// (each on a connection of its own) read a fresh stream from its end
// while s.Publishers publish into it as Pub does. Every record carries in
// its first 8 bytes the instant it was due to be sent, on this process's
// monotonic clock, and each delivery's latency is measured from it. The
// figures count deliveries, every subscriber's. Records a subscriber
// missed (its queue at the broker overflowed) are reported as
// Params.Extra["missed"]. Beside it: a TCP echo of the same requests and,
// with t.DataDir, the disk's limit. A RoleWorkload named "e2e".
func E2E(ctx context.Context, t Target, s Spec, b *Baselines) (bench.Result, error) {
	s, err := s.WithDefaults()
	if err != nil {
		return bench.Result{}, err
	}
	clients, err := t.dial(ctx, s.Connections, s.Inflight*s.Publishers)
	if err != nil {
		return bench.Result{}, err
	}
	defer closeAll(clients)
	stream, err := t.createStream(ctx, clients[0], "e2e", s.Fsync)
	if err != nil {
		return bench.Result{}, err
	}
	defer deleteStream(clients[0], stream)
	if err := warmup(ctx, s, newPubPipe(ctx, clients, stream, s, nil)); err != nil {
		return bench.Result{}, err
	}
	subs, err := subscribeAll(ctx, clients[0], stream, s.Subscribers)
	if err != nil {
		return bench.Result{}, err
	}
	defer closeSubs(subs)
	m, missed, err := runE2E(ctx, clients, stream, subs, s)
	if err != nil {
		return bench.Result{}, err
	}
	params := s.params()
	params.Subscribers = s.Subscribers
	params.Extra["missed"] = fmt.Sprint(missed)
	r := bench.NewResult("e2e", bench.RoleWorkload, params, m)
	r.Machine = t.machineOf()
	return r, addNetBaselines(ctx, &r, t, s, b, publishFrameBytes(s))
}

func subscribeAll(ctx context.Context, c *client.Client, stream client.Stream, n int) ([]*client.Subscription, error) {
	var subs []*client.Subscription
	for range n {
		sub, err := c.Subscribe(ctx, stream, 0, client.SubscribeOptions{Start: client.FromLatest(), Buffer: 1 << 14})
		if err != nil {
			closeSubs(subs)
			return nil, fmt.Errorf("felix/bench/workload: subscribing: %w", err)
		}
		subs = append(subs, sub)
	}
	return subs, nil
}

func closeSubs(subs []*client.Subscription) {
	for _, s := range subs {
		s.Close()
	}
}

// endMarker, as a record's stamp, tells the subscribers publishing is
// over: every record before it was delivered or missed.
const endMarker = ^uint64(0)

// e2eRun is one measurement's shared state: the clock base the stamps
// count from, what the subscribers missed, and when the last arrived.
type e2eRun struct {
	base   time.Time
	missed atomic.Int64
	lastAt atomic.Int64 // ns since base of the last delivery
}

// runE2E publishes and receives at once and measures the deliveries.
// After the last acknowledgement it publishes an end marker; a subscriber
// that has not seen it within drainTimeout stops, and what it did not get
// of what was published counts as missed.
func runE2E(ctx context.Context, clients []*client.Client, stream client.Stream, subs []*client.Subscription, s Spec) (bench.Measurement, int64, error) {
	run := &e2eRun{base: time.Now()}
	rec := bench.NewRecorder(len(subs))
	recvCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	seen := make([]int64, len(subs))
	errs := make([]error, len(subs))
	for i, sub := range subs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seen[i], errs[i] = run.receive(recvCtx, sub, rec.Lane(i))
		}()
	}
	stop := progress(s, "e2e", rec)
	defer stop()
	pm, err := bench.RunPipeline(ctx, s.load(s.Publishers), s.Inflight, nil, newPubPipe(ctx, clients, stream, s, run.stamp))
	if err == nil {
		err = publishEnd(ctx, clients[0], stream, s.RecordBytes)
	}
	if err != nil {
		cancel()
		wg.Wait()
		return bench.Measurement{}, 0, err
	}
	timer := time.AfterFunc(drainTimeout, cancel)
	wg.Wait()
	timer.Stop()
	for i, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, context.Canceled) && ctx.Err() == nil:
			run.missed.Add(max(0, pm.Records-seen[i])) // never saw the end: the rest is missed
		default:
			return bench.Measurement{}, 0, err
		}
	}
	records, bytes := rec.Totals()
	elapsed := pm.Elapsed
	if last := run.lastAt.Load(); last > 0 {
		elapsed = time.Duration(last) - pm.Started.Sub(run.base)
	}
	m := bench.Measurement{Started: pm.Started, Elapsed: elapsed, Records: records, Bytes: bytes, Latency: rec.Latency()}
	return m, run.missed.Load(), nil
}

func publishEnd(ctx context.Context, c *client.Client, stream client.Stream, recordBytes int) error {
	v := make([]byte, recordBytes)
	binary.LittleEndian.PutUint64(v, endMarker)
	_, err := c.Publish(ctx, stream, v)
	return err
}

// stamp writes due, as nanoseconds since the base, into a record's value.
func (run *e2eRun) stamp(value []byte, due time.Time) {
	binary.LittleEndian.PutUint64(value, uint64(due.Sub(run.base)))
}

// receive reads one subscription up to the end marker, recording each
// delivery's latency, and returns how many records it accounted for
// (delivered or missed).
func (run *e2eRun) receive(ctx context.Context, sub *client.Subscription, lane *bench.Lane) (int64, error) {
	var seen int64
	for {
		ev, err := sub.Next(ctx)
		if err != nil {
			return seen, err
		}
		stamp := binary.LittleEndian.Uint64(ev.Value)
		run.missed.Add(int64(ev.Missed))
		seen += int64(ev.Missed)
		if stamp == endMarker {
			return seen, nil
		}
		now := time.Since(run.base)
		lane.Record(now - time.Duration(stamp))
		lane.Count(1, int64(len(ev.Value)))
		seen++
		for last := run.lastAt.Load(); int64(now) > last && !run.lastAt.CompareAndSwap(last, int64(now)); last = run.lastAt.Load() {
		}
	}
}
