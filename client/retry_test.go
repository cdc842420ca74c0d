package client

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// failingHandler answers the first fails publishes with code and acks the
// rest, counting every attempt.
func failingHandler(attempts *atomic.Int64, fails int64, code wire.Code) func(fc *fakeConn, f wire.Frame) {
	return func(fc *fakeConn, f wire.Frame) {
		n := attempts.Add(1)
		if fails < 0 || n <= fails {
			fc.fail(f.RequestID, code, "refused", wire.Details{})
			return
		}
		fc.ack(f.RequestID, wire.AckRun{FirstOffset: uint64(n), Count: 1})
	}
}

// tinyBackoff keeps retry tests fast: the jitter source always draws zero.
func tinyBackoff(p RetryPolicy) []Option {
	return []Option{WithRetryPolicy(p), func(o *options) { o.randN = func(int64) int64 { return 0 } }}
}

func TestAForbiddenPublishFailsFastInsteadOfRetrying(t *testing.T) {
	var attempts atomic.Int64
	b := newFakeBroker(t, failingHandler(&attempts, -1, wire.CodeForbidden))
	c := dialFake(t, b, tinyBackoff(RetryPolicy{Attempts: 10})...)
	_, err := c.PublishAtLeastOnce(testCtx(t), testStream, []byte("v"))
	if !errors.Is(err, ErrForbidden) {
		t.Fatalf("got %v, want forbidden", err)
	}
	if errors.Is(err, ErrRetriesExhausted) {
		t.Fatalf("a forbidden publish was retried: %v", err)
	}
	if n := attempts.Load(); n != 1 {
		t.Fatalf("the broker saw %d attempts, want 1", n)
	}
	t.Run("cluster", forbiddenOnACluster)
}

// On a cluster, a forbidden publish is not tried at another broker
// either: another broker would refuse the same credential.
func forbiddenOnACluster(t *testing.T) {
	a, b := newFakeMember(t), newFakeMember(t)
	a.lists(a, b)
	forbid := func(fc *fakeConn, f wire.Frame) { fc.fail(f.RequestID, wire.CodeForbidden, "no", wire.Details{}) }
	a.answer(forbid)
	b.answer(forbid)
	c := dialFakeCluster(t, []string{a.addr()}, tinyBackoff(RetryPolicy{Attempts: 10})...)
	_, err := c.PublishAtLeastOnce(testCtx(t), testStream, []byte("v"))
	if !errors.Is(err, ErrForbidden) || errors.Is(err, ErrRetriesExhausted) {
		t.Fatalf("got %v, want forbidden at once", err)
	}
	if n := a.publishes.Load() + b.publishes.Load(); n != 1 {
		t.Fatalf("the cluster saw %d attempts, want 1", n)
	}
}

func TestNonRetryableCodesFailFast(t *testing.T) {
	for _, code := range []wire.Code{wire.CodeUnauthenticated, wire.CodeOffsetBelowRetention, wire.CodeInvalidArgument, wire.CodeLimitExceeded} {
		var attempts atomic.Int64
		b := newFakeBroker(t, failingHandler(&attempts, -1, code))
		c := dialFake(t, b, tinyBackoff(RetryPolicy{Attempts: 10})...)
		if _, err := c.PublishAtLeastOnce(testCtx(t), testStream, []byte("v")); !errors.Is(err, code) {
			t.Fatalf("%v: got %v", code, err)
		}
		if n := attempts.Load(); n != 1 {
			t.Fatalf("%v: %d attempts, want 1", code, n)
		}
	}
}

func TestARetryableFailureIsRetriedUpToTheAttemptCount(t *testing.T) {
	var attempts atomic.Int64
	b := newFakeBroker(t, failingHandler(&attempts, -1, wire.CodeOverloaded))
	c := dialFake(t, b, tinyBackoff(RetryPolicy{Attempts: 4})...)
	_, err := c.PublishAtLeastOnce(testCtx(t), testStream, []byte("v"))
	if !errors.Is(err, ErrRetriesExhausted) || !errors.Is(err, ErrOverloaded) {
		t.Fatalf("got %v, want retries exhausted on overloaded", err)
	}
	if n := attempts.Load(); n != 4 {
		t.Fatalf("%d attempts, want 4", n)
	}
}

// An ambiguous failure (the write may have landed) is resent by
// PublishAtLeastOnce, and not by Publish.
func TestOnlyAtLeastOnceResendsAnAmbiguousFailure(t *testing.T) {
	var attempts atomic.Int64
	b := newFakeBroker(t, failingHandler(&attempts, 2, wire.CodeNoQuorum))
	c := dialFake(t, b, tinyBackoff(RetryPolicy{Attempts: 5})...)
	ctx := testCtx(t)
	if _, err := c.Publish(ctx, testStream, []byte("v")); !errors.Is(err, ErrNoQuorum) || !Ambiguous(err) {
		t.Fatalf("publish: %v, want an ambiguous no_quorum", err)
	}
	if n := attempts.Load(); n != 1 {
		t.Fatalf("publish made %d attempts", n)
	}
	pos, err := c.PublishAtLeastOnce(ctx, testStream, []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	if n := attempts.Load(); n != 3 || pos.Offset != 3 {
		t.Fatalf("%d attempts in all, landed at %d; want 3 and 3", n, pos.Offset)
	}
}

func TestTheBackoffIsFullJitterUnderADoublingCappedCeiling(t *testing.T) {
	p := RetryPolicy{InitialBackoff: 10 * time.Millisecond, MaxBackoff: 70 * time.Millisecond}
	wantCeilings := []time.Duration{10, 20, 40, 70, 70}
	for i, want := range wantCeilings {
		if got := p.Ceiling(i + 1); got != want*time.Millisecond {
			t.Fatalf("ceiling %d = %v, want %v", i+1, got, want*time.Millisecond)
		}
	}
	top := func(m int64) int64 { return m - 1 }
	bottom := func(int64) int64 { return 0 }
	if got := p.Backoff(3, top); got != 40*time.Millisecond {
		t.Fatalf("the highest draw waits %v, want the ceiling", got)
	}
	if got := p.Backoff(3, bottom); got != 0 {
		t.Fatalf("the lowest draw waits %v, want 0", got)
	}
	var lowHalf, n int
	for range 2000 {
		d := p.Backoff(2, randInt64N)
		if d < 0 || d > 20*time.Millisecond {
			t.Fatalf("backoff %v outside [0, 20ms]", d)
		}
		if d < 10*time.Millisecond {
			lowHalf++
		}
		n++
	}
	if lowHalf < n/3 || lowHalf > 2*n/3 {
		t.Fatalf("%d of %d draws in the lower half: not uniform over [0, ceiling]", lowHalf, n)
	}
	if d := (RetryPolicy{}).withDefaults(); d.Attempts != DefaultRetryAttempts || d.Deadline != 0 {
		t.Fatalf("defaults %+v: the deadline must be off by default", d)
	}
}

// The deadline covers every attempt and sleep: a retry whose backoff would
// end at or past it is not made.
func TestTheRetryDeadlineStopsRetriesThatCouldNotFinishInTime(t *testing.T) {
	start := time.Unix(1000, 0)
	p := RetryPolicy{Attempts: 100, InitialBackoff: time.Second, MaxBackoff: time.Second, Deadline: 2500 * time.Millisecond}
	r := newRetrier(p, func(m int64) int64 { return m - 1 }, start) // every wait is the full second
	now := start
	for i := 0; i < 2; i++ {
		wait, err := r.next(ErrConnectionLost, now)
		if err != nil {
			t.Fatalf("retry %d refused: %v", i+1, err)
		}
		now = now.Add(wait)
	}
	_, err := r.next(ErrConnectionLost, now)
	if !errors.Is(err, ErrRetryDeadline) || !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("third retry at %v: %v, want the deadline", now.Sub(start), err)
	}
	if r.attempts != 3 {
		t.Fatalf("%d attempts counted", r.attempts)
	}
}

func TestTheRetryDeadlineEndsAPublishThatKeepsFailing(t *testing.T) {
	var attempts atomic.Int64
	b := newFakeBroker(t, failingHandler(&attempts, -1, wire.CodeShuttingDown))
	c := dialFake(t, b, WithRetryPolicy(RetryPolicy{Attempts: 1 << 20, InitialBackoff: time.Millisecond,
		MaxBackoff: time.Millisecond, Deadline: 30 * time.Millisecond}))
	_, err := c.PublishAtLeastOnce(testCtx(t), testStream, []byte("v"))
	if !errors.Is(err, ErrRetryDeadline) {
		t.Fatalf("got %v, want the retry deadline", err)
	}
	if n := attempts.Load(); n < 2 {
		t.Fatalf("%d attempts before the deadline", n)
	}
}
