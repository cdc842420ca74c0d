package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Load says how Run drives an operation.
type Load struct {
	// Workers is the number of goroutines calling the operation (at least 1).
	Workers int
	// Ops bounds the calls of the operation, all workers together; 0 means
	// no bound. Ops are split evenly between workers up front, so no
	// counter is shared on the hot path.
	Ops int64
	// Duration bounds the run; 0 means no bound. At least one of Ops and
	// Duration must be set.
	Duration time.Duration
	// Rate, when positive, makes the run open-loop: Rate calls per second,
	// all workers together, each due at a fixed time and its latency
	// measured from that time. Zero makes it closed-loop: each worker calls
	// again as soon as the last call returns, latency measured from the call.
	// A caller that batches converts records/s to calls/s itself.
	Rate float64
	// Clock is nil for SystemClock.
	Clock Clock
}

// Op performs one call for worker (0 <= worker < Workers) and reports the
// records and bytes it moved; its latency is weighted by records, so a batch
// of 100 acknowledged at once counts as 100 records that each waited.
type Op func(worker int) (records, bytes int64, err error)

// Measurement is what Run saw. NewResult turns it into a Result.
type Measurement struct {
	Started time.Time
	Elapsed time.Duration
	Records int64
	Bytes   int64
	Latency Latency
}

// Run calls op from l.Workers goroutines until l.Ops calls are made, l.Duration
// has passed or ctx is done, recording into rec (one lane per worker; nil for
// a fresh recorder). The first error from op stops every worker and is
// returned with the measurement so far; so is ctx's error.
func Run(ctx context.Context, l Load, rec *Recorder, op Op) (Measurement, error) {
	r, err := newRun(l, rec)
	if err != nil {
		return Measurement{}, err
	}
	r.op = op
	err = r.all(ctx, r.worker)
	return r.measurement(), err
}

// newRun checks l, fills its defaults and starts the clock.
func newRun(l Load, rec *Recorder) (*run, error) {
	if l.Workers < 1 {
		l.Workers = 1
	}
	if l.Ops <= 0 && l.Duration <= 0 {
		return nil, ErrNoLimit
	}
	if rec == nil {
		rec = NewRecorder(l.Workers)
	}
	if rec.Lanes() != l.Workers {
		return nil, ErrLanes
	}
	if l.Clock == nil {
		l.Clock = SystemClock()
	}
	r := &run{load: l, rec: rec, started: l.Clock.Now()}
	if l.Rate != 0 {
		s, err := NewSchedule(r.started, l.Rate)
		if err != nil {
			return nil, err
		}
		r.schedule = &s
	}
	if l.Duration > 0 {
		r.deadline = r.started.Add(l.Duration)
	}
	return r, nil
}

// measurement is what the run saw, once every worker has returned.
func (r *run) measurement() Measurement {
	records, bytes := r.rec.Totals()
	return Measurement{
		Started: r.started,
		Elapsed: r.load.Clock.Now().Sub(r.started),
		Records: records,
		Bytes:   bytes,
		Latency: r.rec.Latency(),
	}
}

type run struct {
	load     Load
	rec      *Recorder
	op       Op
	started  time.Time
	deadline time.Time // zero: none
	schedule *Schedule // nil: closed loop

	stop     atomic.Bool
	errOnce  sync.Once
	firstErr error
}

func (r *run) all(ctx context.Context, worker func(w int) error) error {
	watchDone := make(chan struct{})
	defer close(watchDone)
	go func() {
		select {
		case <-ctx.Done():
			r.fail(ctx.Err())
		case <-watchDone:
		}
	}()
	var wg sync.WaitGroup
	for w := 0; w < r.load.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := worker(w); err != nil {
				r.fail(err)
			}
		}()
	}
	wg.Wait()
	r.errOnce.Do(func() {}) // a later fail can no longer race the read
	return r.firstErr
}

func (r *run) fail(err error) {
	r.errOnce.Do(func() { r.firstErr = err })
	r.stop.Store(true)
}

// quota returns how many calls worker w makes; -1 for no bound.
func (r *run) quota(w int) int64 {
	n, workers := r.load.Ops, int64(r.load.Workers)
	if n <= 0 {
		return -1
	}
	q := n / workers
	if int64(w) < n%workers {
		q++
	}
	return q
}

func (r *run) worker(w int) error {
	lane, clock := r.rec.Lane(w), r.load.Clock
	var pacer Pacer
	if r.schedule != nil {
		pacer = r.schedule.Pacer(w, r.load.Workers)
	}
	for k, quota := int64(0), r.quota(w); quota < 0 || k < quota; k++ {
		if r.stop.Load() {
			return nil
		}
		var begin time.Time
		if r.schedule == nil {
			begin = clock.Now()
		} else {
			if r.pastDeadline(pacer.Peek()) {
				return nil
			}
			begin = pacer.Wait(clock)
		}
		records, bytes, err := r.op(w)
		end := clock.Now()
		if err != nil {
			return err
		}
		lane.RecordN(end.Sub(begin), records)
		lane.Count(records, bytes)
		if r.pastDeadline(end) {
			return nil
		}
	}
	return nil
}

func (r *run) pastDeadline(t time.Time) bool {
	return !r.deadline.IsZero() && !t.Before(r.deadline)
}
