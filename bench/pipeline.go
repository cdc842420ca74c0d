package bench

import (
	"context"
	"time"
)

// Pipeline is an operation that is sent and answered separately, so that
// one worker keeps several in flight (publishes awaiting their acks). Each
// worker's calls are answered in the order they were sent.
type Pipeline interface {
	// Send starts one call of worker. due is the instant its latency is
	// measured from (its due time in an open-loop run, the moment of
	// sending in a closed-loop one), for payloads that carry it.
	Send(worker int, due time.Time) (pending any, err error)
	// Await waits for the answer to worker's oldest call not yet awaited
	// (pending is what Send returned for it) and reports the records and
	// bytes it moved. It must return once the run's context is done.
	Await(worker int, pending any) (records, bytes int64, err error)
}

// RunPipeline is Run for a Pipeline: each of l.Workers keeps up to window
// calls in flight (window <= 1: one at a time, answered before the next is
// sent). A worker's sends are paced as Run paces calls (l.Rate calls per
// second, all workers together); a send whose window is full waits for
// the oldest answer, and in an open-loop run that wait counts against the
// later sends' latency, measured from their due time. Each call's latency
// runs from due to its answer, weighted by its records. Ops counts sends;
// Duration stops the sending, after which the calls in flight are still
// awaited and counted. The first error stops every worker.
func RunPipeline(ctx context.Context, l Load, window int, rec *Recorder, p Pipeline) (Measurement, error) {
	r, err := newRun(l, rec)
	if err != nil {
		return Measurement{}, err
	}
	err = r.all(ctx, func(w int) error {
		if window <= 1 {
			return r.callOneByOne(w, p)
		}
		return r.pipeline(w, window, p)
	})
	return r.measurement(), err
}

// inflight is one call sent and not yet awaited.
type inflight struct {
	pending any
	due     time.Time
}

// callOneByOne sends and awaits each call before the next.
func (r *run) callOneByOne(w int, p Pipeline) error {
	lane := r.rec.Lane(w)
	return r.sendAll(w, func(due time.Time) error {
		pending, err := p.Send(w, due)
		if err != nil {
			return err
		}
		return r.await(w, p, lane, inflight{pending, due})
	})
}

// pipeline runs a sender and, on a goroutine of its own, the awaiter that
// owns worker w's lane. The sender takes one of window slots before each
// send and the awaiter frees it after the answer, so window calls are in
// flight at most; the queue never blocks.
func (r *run) pipeline(w, window int, p Pipeline) error {
	queue := make(chan inflight, window)
	slots := make(chan struct{}, window)
	awaited := make(chan error, 1)
	go func() { awaited <- r.awaitAll(w, p, queue, slots) }()
	err := r.sendAll(w, func(due time.Time) error {
		slots <- struct{}{}
		pending, err := p.Send(w, due)
		if err != nil {
			<-slots
			return err
		}
		queue <- inflight{pending, due}
		return nil
	})
	close(queue)
	if aerr := <-awaited; err == nil {
		err = aerr
	}
	return err
}

// sendAll paces worker w's sends until its quota, the deadline or a stop.
func (r *run) sendAll(w int, send func(due time.Time) error) error {
	clock := r.load.Clock
	var pacer Pacer
	if r.schedule != nil {
		pacer = r.schedule.Pacer(w, r.load.Workers)
	}
	for k, quota := int64(0), r.quota(w); quota < 0 || k < quota; k++ {
		if r.stop.Load() {
			return nil
		}
		var due time.Time
		if r.schedule == nil {
			due = clock.Now()
		} else {
			if r.pastDeadline(pacer.Peek()) {
				return nil
			}
			due = pacer.Wait(clock)
		}
		if err := send(due); err != nil {
			return err
		}
		if r.pastDeadline(clock.Now()) {
			return nil
		}
	}
	return nil
}

// awaitAll awaits the queued calls in order, freeing a slot after each.
// After a failure it stops awaiting but keeps taking calls off the queue
// and freeing their slots, so the sender never blocks for good.
func (r *run) awaitAll(w int, p Pipeline, queue <-chan inflight, slots <-chan struct{}) error {
	lane := r.rec.Lane(w)
	var first error
	for call := range queue {
		if first == nil {
			if err := r.await(w, p, lane, call); err != nil {
				first = err
				r.fail(err)
			}
		}
		<-slots
	}
	return first
}

func (r *run) await(w int, p Pipeline, lane *Lane, call inflight) error {
	records, bytes, err := p.Await(w, call.pending)
	end := r.load.Clock.Now()
	if err != nil {
		return err
	}
	lane.RecordN(end.Sub(call.due), records)
	lane.Count(records, bytes)
	return nil
}
