package workload

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/bench"
)

// GroupRecordsDefault is how many records the group workloads drain when
// the Spec gives no Count: about a second's drain for one consumer of
// 1 KiB records on 2 cores.
const GroupRecordsDefault = 300_000

// errDrained ends a drain: every record was taken.
var errDrained = errors.New("felix/bench/workload: drained")

// ErrBaseline marks a baseline that did not measure what its workload
// did (a subscription that missed records of the stream).
var ErrBaseline = errors.New("felix/bench/workload: baseline not comparable")

// GroupShape is what the group workloads take beside a Spec.
type GroupShape struct {
	// Consumers lists the consumer counts, each a drain of its own: a
	// fresh group takes every record of the stream with that many
	// consumers. Empty is {1}.
	Consumers []int
	// SyncAck waits for each ack before the next poll. Otherwise a
	// consumer sends its ack and polls again at once (AckAsync), with one
	// ack in flight. The engine-only workload always acks synchronously.
	SyncAck bool
}

// WithDefaults fills the zero fields and checks the rest.
func (g GroupShape) WithDefaults() (GroupShape, error) {
	if len(g.Consumers) == 0 {
		g.Consumers = []int{1}
	}
	for _, n := range g.Consumers {
		if n < 1 || n > WorkersMax {
			return g, fmt.Errorf("%w: %d consumers, want 1..%d", ErrSpec, n, WorkersMax)
		}
	}
	return g, nil
}

func (g GroupShape) most() int {
	n := 0
	for _, c := range g.Consumers {
		n = max(n, c)
	}
	return n
}

// groupSpec fills the defaults of both and says how many records to drain.
func groupSpec(s Spec, g GroupShape) (Spec, GroupShape, int64, error) {
	s, err := s.WithDefaults()
	if err != nil {
		return s, g, 0, err
	}
	g, err = g.WithDefaults()
	records := s.Count
	if records == 0 {
		records = GroupRecordsDefault
	}
	return s, g, records, err
}

// groupBackend is what a group drain takes records from: a broker
// through the client, or a group manager in this process. take(w) is
// called by worker w only.
type groupBackend interface {
	// start makes a fresh group, from the stream's first record, for
	// consumers consumers.
	start(name string, consumers int) error
	// take polls up to max records for consumer w and acks them.
	take(w, max int) (records, bytes int64, err error)
	// finish settles the acks still in flight and reads the group's
	// counters.
	finish() (acked, redelivered uint64, err error)
}

// subscriptionReader is one plain subscription from the stream's first
// record: the baseline a group's deliveries stand on.
type subscriptionReader interface {
	// next reads at least one record and at most max, waiting for the
	// first, and counts the records it was told it missed.
	next(max int) (records, bytes, missed int64, err error)
}

// measureGroups drains the stream's records once through sub, then once
// per consumer count through a fresh group of back, each beside the
// subscription. RoleWorkload results named "group", one per count.
func measureGroups(ctx context.Context, s Spec, g GroupShape, records int64, back groupBackend, sub subscriptionReader,
	params bench.Params) ([]bench.Result, error) {
	base, err := drainSubscription(ctx, s, records, sub, params)
	if err != nil {
		return nil, err
	}
	var out []bench.Result
	for i, n := range g.Consumers {
		r, err := drainGroup(ctx, s, records, back, "bench-"+strconv.Itoa(i)+"-"+strconv.Itoa(n), n, params)
		if err != nil {
			return nil, err
		}
		r.AddBaseline("subscription", base)
		out = append(out, r)
	}
	return out, nil
}

func groupParams(s Spec, g GroupShape, records int64) bench.Params {
	p := bench.Params{RecordBytes: s.RecordBytes, Batch: s.Batch, Fsync: FsyncName(s.Fsync),
		Extra: map[string]string{"records": strconv.FormatInt(records, 10), "ack": "async"}}
	if g.SyncAck {
		p.Extra["ack"] = "sync"
	}
	return p
}

// drainGroup has consumers consumers of a fresh group poll and ack until
// every record was taken; latency is a poll and its ack, weighted by the
// records they carried.
func drainGroup(ctx context.Context, s Spec, records int64, back groupBackend, name string, consumers int,
	params bench.Params) (bench.Result, error) {
	if err := back.start(name, consumers); err != nil {
		return bench.Result{}, err
	}
	r, err := drain(ctx, s, "group", bench.RoleWorkload, consumers, untilTaken(records, func(w int) (int64, int64, error) {
		return back.take(w, s.Batch)
	}))
	acked, redelivered, ferr := back.finish()
	if err = errors.Join(err, ferr); err != nil {
		return bench.Result{}, err
	}
	r.Params = withExtra(params, "acked", strconv.FormatUint(acked, 10), "redelivered", strconv.FormatUint(redelivered, 10))
	r.Params.Subscribers = consumers
	return r, nil
}

// drainSubscription reads every record once through sub, s.Batch at a
// time: a RoleBaseline named "subscription/drain", records/s only. A
// record the subscription missed (it replays stored records, so none
// should be) is an error: the baseline would not have read what the
// groups read.
func drainSubscription(ctx context.Context, s Spec, records int64, sub subscriptionReader, params bench.Params) (bench.Result, error) {
	left := records // read by one worker only
	r, err := drain(ctx, s, "subscription/drain", bench.RoleBaseline, 1, untilTaken(records, func(int) (int64, int64, error) {
		n, bytes, missed, err := sub.next(int(min(int64(s.Batch), left)))
		left -= n
		if err == nil && missed > 0 {
			err = fmt.Errorf("%w: the subscription missed %d records of the stream", ErrBaseline, missed)
		}
		return n, bytes, err
	}))
	if err != nil {
		return bench.Result{}, err
	}
	r.Params = withExtra(params)
	delete(r.Params.Extra, "ack")
	r.Params.Subscribers = 1
	r.Latency = nil // taking a batch from a read-ahead is no round trip: no latency to set beside a poll's
	return r, nil
}

// untilTaken wraps take so that the run ends once records were taken, all
// workers together: the call that takes the last returns its records as
// usual, and each worker's next call ends the run. A call that took none
// (another consumer holds what is left) returns nothing and is called
// again.
func untilTaken(records int64, take bench.Op) bench.Op {
	var taken atomic.Int64
	return func(w int) (int64, int64, error) {
		if taken.Load() >= records {
			return 0, 0, errDrained
		}
		n, bytes, err := take(w)
		taken.Add(n)
		return n, bytes, err
	}
}

// drain runs op from workers until the records are taken or the duration
// (an hour when none is given) passes.
func drain(ctx context.Context, s Spec, name string, role bench.Role, workers int, op bench.Op) (bench.Result, error) {
	d := s.Duration
	if d == 0 {
		d = time.Hour
	}
	rec := bench.NewRecorder(workers)
	stop := progress(s, name, rec)
	m, err := bench.Run(ctx, bench.Load{Workers: workers, Duration: d}, rec, op)
	stop()
	if err != nil && !errors.Is(err, errDrained) {
		return bench.Result{}, err
	}
	return bench.NewResult(name, role, bench.Params{}, m), nil
}

// withExtra copies p with its Extra copied and kv (key, value, ...) set.
func withExtra(p bench.Params, kv ...string) bench.Params {
	extra := make(map[string]string, len(p.Extra)+len(kv)/2)
	for k, v := range p.Extra {
		extra[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		extra[kv[i]] = kv[i+1]
	}
	p.Extra = extra
	return p
}
