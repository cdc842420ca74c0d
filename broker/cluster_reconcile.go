package broker

import (
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/felixbroker/felix/cluster/control"
)

// reconciler brings the open shards in line with the View: at its start,
// and after every change the View sees, it runs each step (the engine's
// Reconcile, then the caches'). A step that fails is logged and the round
// is tried again at the next change or after a backoff (doubling to its
// bound), whichever comes first: a shard that would not open (a full
// disk, say) is retried without waiting for the cluster to change.
type reconciler struct {
	view       *control.View
	steps      []func() error
	base, max  time.Duration
	logger     *slog.Logger
	quit, done chan struct{}

	mu      sync.Mutex
	ok      bool          // a round has succeeded
	lastErr error         // the last round's error, nil after a success
	ended   chan struct{} // closed and replaced at the end of each round
}

// startReconciler runs the first round on the caller's goroutine (so a
// Start that returns has opened what it holds, unless that failed), then
// the loop on its own until stop.
func startReconciler(v *control.View, steps []func() error, base, max time.Duration, logger *slog.Logger) *reconciler {
	r := &reconciler{view: v, steps: steps, base: base, max: max, logger: logger,
		quit: make(chan struct{}), done: make(chan struct{}), ended: make(chan struct{})}
	changed := v.Changed()
	err := r.round()
	go r.run(changed, err)
	return r
}

// run loops on from the first round, which ended with err; changed was
// taken before it.
func (r *reconciler) run(changed <-chan struct{}, err error) {
	defer close(r.done)
	wait := r.base
	for {
		var retry *time.Timer
		if err != nil {
			r.logger.Warn("reconciling the shards with the cluster view failed; retrying", "err", err, "retry_in", wait)
			retry = time.NewTimer(wait)
			wait = min(2*wait, r.max)
		} else {
			wait = r.base
		}
		quit := r.await(changed, retry)
		if retry != nil {
			retry.Stop()
		}
		if quit {
			return
		}
		changed = r.view.Changed() // before the round: a change during it runs another
		err = r.round()
	}
}

// await waits for the View's next change, the retry (when there is one)
// or stop, and reports whether it was stop.
func (r *reconciler) await(changed <-chan struct{}, retry *time.Timer) bool {
	var fired <-chan time.Time
	if retry != nil {
		fired = retry.C
	}
	select {
	case <-changed:
	case <-fired:
	case <-r.quit:
		return true
	}
	return false
}

// round runs every step, the later ones even when an earlier failed
// (the caches need not wait for a stream's shard), and records how it
// went.
func (r *reconciler) round() error {
	var errs []error
	for _, step := range r.steps {
		errs = append(errs, step())
	}
	err := errors.Join(errs...)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastErr = err
	r.ok = r.ok || err == nil
	close(r.ended)
	r.ended = make(chan struct{})
	return err
}

// roundEnded returns a channel closed when the next round ends: take it,
// look, and wait on it, and no round is missed (as View.Changed).
func (r *reconciler) roundEnded() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ended
}

// stop ends the loop and waits for a round in progress.
func (r *reconciler) stop() {
	select {
	case <-r.quit:
	default:
		close(r.quit)
	}
	<-r.done
}

// notReady is "" once a round has succeeded, else why not.
func (r *reconciler) notReady() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.ok:
		return ""
	case r.lastErr != nil:
		return "opening the shards this broker holds failed: " + r.lastErr.Error()
	}
	return "opening the shards this broker holds"
}
