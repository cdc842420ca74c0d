package client

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// clock is the time a cluster client's retries read and sleep on. Tests
// give a fake one, so that a deadline across attempts and sleeps is
// checked without sleeping.
type clock interface {
	Now() time.Time
	// Sleep waits d within ctx.
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time                                   { return time.Now() }
func (realClock) Sleep(ctx context.Context, d time.Duration) error { return sleep(ctx, d) }

// resend says which failures an operation is sent again after. A broker
// that could not be reached (nothing was sent) is passed over under every
// rule, and a failure no attempt can fix (Retryable false) ends every one.
type resend uint8

const (
	// resendNever: the frame leaves once (Publish, a cache write). Only
	// a failure to reach any broker is tried again.
	resendNever resend = iota
	// resendSafe: also a retryable failure that proves nothing was
	// applied (not Ambiguous): not_leader, shutting_down, overloaded.
	resendSafe
	// resendAny: any retryable failure, ambiguous ones included
	// (PublishAtLeastOnce, reads, subscribes).
	resendAny
)

// redirectsMax bounds the not_leader redirects one operation follows at
// once, without a backoff or an attempt; past it a redirect is a retry
// like another (brokers whose views disagree cannot bounce it forever).
const redirectsMax = 4

// again reports whether an operation under rule is tried again after err.
func again(rule resend, err error) bool {
	switch {
	case !Retryable(err):
		return false
	case errors.Is(err, ErrNotSent):
		return true
	case rule == resendAny:
		return true
	case rule == resendSafe:
		return !Ambiguous(err)
	}
	return false
}

// run does op at the broker t chooses (its shard's leader when known),
// trying again under rule and the RetryPolicy: the attempts, a full-jitter
// backoff between them, and the policy's deadline across every attempt
// and sleep. A redirect is followed at once. op runs with the Client of a
// broker whose connection is up. The failure returned is the most severe
// of every try's: Ambiguous once any try may have been applied, even if
// the last was not sent or was cut short by the deadline.
func (c *ClusterClient) run(parent context.Context, t target, rule resend, op func(context.Context, *Client) error) error {
	clk := c.opts.clock
	r := newRetrier(c.opts.retry, c.opts.randN, clk.Now())
	ctx := parent
	if r.policy.Deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(parent, r.policy.Deadline)
		defer cancel()
	}
	var hint string
	var prev error   // the last failure before this one
	var unsure error // the last failure of a try that may have been applied
	redirects := 0
	for {
		err := c.attempt(ctx, t, hint, op)
		if err == nil {
			return nil
		}
		unsure = unsureOf(err, unsure)
		if prev != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			err = prev // cut short by the deadline: the failure before says more (unsure keeps this try's)
		}
		prev = err
		hint = c.learn(t, err)
		if hint != "" && redirects < redirectsMax && again(rule, err) {
			redirects++
			continue
		}
		if ctx.Err() != nil && parent.Err() == nil { // the policy's deadline, not the caller's
			return worst(fmt.Errorf("%w (%d attempts): %w", ErrRetryDeadline, r.attempts+1, err), unsure)
		}
		if !again(rule, err) {
			return worst(err, unsure)
		}
		wait, stop := r.next(err, clk.Now())
		if stop != nil {
			return worst(stop, unsure)
		}
		if serr := clk.Sleep(ctx, wait); serr != nil {
			if parent.Err() == nil {
				return worst(fmt.Errorf("%w (%d attempts): %w", ErrRetryDeadline, r.attempts, err), unsure)
			}
			return worst(fmt.Errorf("%w; the last attempt: %w", serr, err), unsure)
		}
	}
}

// attempt makes one try of op: at hint if a redirect named a broker, else
// where t routes. A failure is marked with the broker it came from, for
// learn.
func (c *ClusterClient) attempt(ctx context.Context, t target, hint string, op func(context.Context, *Client) error) error {
	addr := hint
	if addr == "" {
		addr = c.leader(ctx, t)
	}
	cl, err := c.connect(ctx, addr)
	if err != nil {
		return err
	}
	if err := op(ctx, cl); err != nil {
		return &fromBroker{addr: cl.addr, err: err}
	}
	return nil
}

// fromBroker is an operation's failure at the broker addr. It is
// transparent: errors.Is and As see err.
type fromBroker struct {
	addr string
	err  error
}

func (e *fromBroker) Error() string { return e.err.Error() + " (at " + e.addr + ")" }
func (e *fromBroker) Unwrap() error { return e.err }
