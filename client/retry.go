package client

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// RetryPolicy bounds PublishAtLeastOnce: an attempt count, a full-jitter
// exponential backoff between attempts, and optionally a deadline across
// every attempt and sleep. Zero fields take the defaults.
type RetryPolicy struct {
	// Attempts is the most tries, the first included (default 5).
	Attempts int
	// InitialBackoff is the backoff ceiling before the second attempt; it
	// doubles before each later one (default 50ms).
	InitialBackoff time.Duration
	// MaxBackoff caps the ceiling (default 5s).
	MaxBackoff time.Duration
	// Deadline bounds the whole operation, every attempt and sleep
	// included. Zero (the default) is none: a deadline shorter than one
	// attempt's own timeout prevents any retry at all, so a useful value
	// depends on the caller's latency budget, not on a number this library
	// can pick.
	Deadline time.Duration
}

// DefaultRetryPolicy's values.
const (
	DefaultRetryAttempts  = 5
	DefaultInitialBackoff = 50 * time.Millisecond
	DefaultMaxBackoff     = 5 * time.Second
)

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.Attempts <= 0 {
		p.Attempts = DefaultRetryAttempts
	}
	if p.InitialBackoff <= 0 {
		p.InitialBackoff = DefaultInitialBackoff
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = DefaultMaxBackoff
	}
	p.MaxBackoff = max(p.MaxBackoff, p.InitialBackoff)
	return p
}

// Ceiling is the backoff ceiling before retry n (n = 1 before the second
// attempt): InitialBackoff doubled n-1 times, capped at MaxBackoff.
func (p RetryPolicy) Ceiling(n int) time.Duration {
	p = p.withDefaults()
	c := p.InitialBackoff
	for i := 1; i < n && c < p.MaxBackoff; i++ {
		c *= 2
	}
	return min(c, p.MaxBackoff)
}

// Backoff is a full-jitter wait before retry n: uniform over [0, Ceiling(n)],
// drawn with randN (which returns a value in [0, m)). Unjittered, every
// client that noticed a failover at the same moment would retry in step.
func (p RetryPolicy) Backoff(n int, randN func(m int64) int64) time.Duration {
	return time.Duration(randN(int64(p.Ceiling(n)) + 1))
}

func randInt64N(n int64) int64 { return rand.Int64N(n) }

// retrier decides, purely, after each failed attempt whether and when to
// try again.
type retrier struct {
	policy   RetryPolicy
	randN    func(int64) int64
	deadline time.Time // zero: none
	attempts int       // made so far
}

func newRetrier(p RetryPolicy, randN func(int64) int64, start time.Time) *retrier {
	p = p.withDefaults()
	r := &retrier{policy: p, randN: randN}
	if p.Deadline > 0 {
		r.deadline = start.Add(p.Deadline)
	}
	return r
}

// next is told that an attempt failed with err at now. It returns how long
// to wait before the next attempt, or the error to give up with: err itself
// when no attempt could succeed (a non-retryable code, a cancelled
// context), wrapped with ErrRetriesExhausted or ErrRetryDeadline otherwise.
func (r *retrier) next(err error, now time.Time) (time.Duration, error) {
	r.attempts++
	if !Retryable(err) {
		return 0, err
	}
	if r.attempts >= r.policy.Attempts {
		return 0, fmt.Errorf("%w (%d attempts): %w", ErrRetriesExhausted, r.attempts, err)
	}
	wait := r.policy.Backoff(r.attempts, r.randN)
	if !r.deadline.IsZero() && !now.Add(wait).Before(r.deadline) {
		return 0, fmt.Errorf("%w (%d attempts): %w", ErrRetryDeadline, r.attempts, err)
	}
	return wait, nil
}

// PublishAtLeastOnce is Publish that resends: the contract's
// publish_at_least_once. A failure that a retry could fix (a lost
// connection, a broker shutting down, a timeout, no quorum: every code
// wire.Code.Retryable allows, and any error with no code) is retried under
// the client's RetryPolicy, dialing again as needed. A failure whose
// outcome was ambiguous is retried too, so the record can land twice: that
// is the "at least once". A failure that cannot succeed on another attempt
// (forbidden, unauthenticated, an offset below retention, an invalid or
// oversized request) fails at once, without a retry.
func (c *Client) PublishAtLeastOnce(ctx context.Context, stream Stream, value []byte, opts ...PublishOption) (Position, error) {
	var pos Position
	err := c.retry(ctx, func(ctx context.Context) error {
		var err error
		pos, err = c.Publish(ctx, stream, value, opts...)
		return err
	})
	return pos, err
}

// PublishBatchAtLeastOnce is PublishBatch that resends, as
// PublishAtLeastOnce; a resent batch may land twice.
func (c *Client) PublishBatchAtLeastOnce(ctx context.Context, stream Stream, records []Record, opts ...PublishOption) ([]AckRun, error) {
	var runs []AckRun
	err := c.retry(ctx, func(ctx context.Context) error {
		var err error
		runs, err = c.PublishBatch(ctx, stream, records, opts...)
		return err
	})
	return runs, err
}

// retry runs attempt until it succeeds or the policy gives up. Its failure
// is Ambiguous once any attempt may have been applied (worst).
func (c *Client) retry(parent context.Context, attempt func(context.Context) error) error {
	r := newRetrier(c.opts.retry, c.opts.randN, time.Now())
	ctx := parent
	if !r.deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(parent, r.deadline)
		defer cancel()
	}
	// pastDeadline: ctx ended because the policy's deadline did, not the
	// caller's context.
	pastDeadline := func() bool { return ctx.Err() != nil && parent.Err() == nil }
	var unsure error // the last failure of an attempt that may have been applied
	for {
		err := attempt(ctx)
		if err == nil {
			return nil
		}
		unsure = unsureOf(err, unsure)
		if pastDeadline() {
			return worst(fmt.Errorf("%w (%d attempts): %w", ErrRetryDeadline, r.attempts+1, err), unsure)
		}
		wait, stop := r.next(err, time.Now())
		if stop != nil {
			return worst(stop, unsure)
		}
		if serr := sleep(ctx, wait); serr != nil {
			if pastDeadline() {
				return worst(fmt.Errorf("%w (%d attempts): %w", ErrRetryDeadline, r.attempts, err), unsure)
			}
			return worst(fmt.Errorf("%w; the last attempt: %w", serr, err), unsure)
		}
	}
}

// sleep waits d within ctx.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
