package client

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// A BROKER_LIST that leaves the seed out, and then one that names nobody,
// add what they name and take nothing away: the seed stays first, and when
// every learned broker is gone the client still gets in through it.
func TestTheConfiguredSeedIsNeverDropped(t *testing.T) {
	seed, other := newFakeMember(t), newFakeMember(t)
	seed.lists(other)
	c := dialFakeCluster(t, []string{seed.addr()})
	if got, want := c.Brokers(), []string{seed.addr(), other.addr()}; !slices.Equal(got, want) {
		t.Fatalf("brokers after a list without the seed: %v, want %v", got, want)
	}
	seed.lists()
	if err := c.Refresh(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if got := c.Brokers(); len(got) != 2 || got[0] != seed.addr() {
		t.Fatalf("brokers after an empty list: %v, want the seed first and the learned one kept", got)
	}
	other.close()
	if _, err := c.Publish(testCtx(t), testStream, []byte("v")); err != nil {
		t.Fatalf("publish with only the seed up: %v", err)
	}
	if seed.publishes.Load() != 1 {
		t.Fatalf("the seed saw %d publishes, want 1", seed.publishes.Load())
	}
}

// Publish passes over a broker it cannot reach, but a publish whose
// connection died after it left is returned, never sent again: not to
// the same broker and not to another. The next publish goes to a broker
// that is up.
func TestAClusterPublishReconnectsButNeverResends(t *testing.T) {
	a, b := newFakeMember(t), newFakeMember(t)
	dead := deadAddr(t)
	a.lists(a, b)
	c := dialFakeCluster(t, []string{dead, a.addr()})
	a.answer(func(fc *fakeConn, f wire.Frame) { _ = fc.nc.Close() }) // the broker dies holding the publish
	_, err := c.Publish(testCtx(t), testStream, []byte("v"))
	if !errors.Is(err, ErrConnectionLost) || !Ambiguous(err) {
		t.Fatalf("publish whose broker died: %v, want an ambiguous ErrConnectionLost", err)
	}
	if na, nb := a.publishes.Load(), b.publishes.Load(); na != 1 || nb != 0 {
		t.Fatalf("the publish was sent %d times to a and %d to b, want once", na, nb)
	}
	a.close()
	if _, err := c.Publish(testCtx(t), testStream, []byte("w")); err != nil {
		t.Fatalf("the next publish: %v", err)
	}
	if nb := b.publishes.Load(); nb != 1 {
		t.Fatalf("b saw %d publishes, want the next one", nb)
	}
}

// not_found is retried (a broker promoted a moment ago may not have opened
// the shard), and a not_leader redirect is followed at once to the broker
// it names, without a backoff.
func TestAClusterClientRetriesNotFoundAndFollowsARedirect(t *testing.T) {
	a, b := newFakeMember(t), newFakeMember(t)
	a.lists(a)
	clk := &fakeClock{now: time.Unix(1000, 0)}
	c := dialFakeCluster(t, []string{a.addr()}, withClock(clk), WithRetryPolicy(RetryPolicy{Attempts: 5}))
	var refused atomic.Int64
	a.answer(func(fc *fakeConn, f wire.Frame) {
		if refused.Add(1) <= 2 {
			fc.fail(f.RequestID, wire.CodeNotFound, "not open yet", wire.Details{})
			return
		}
		fc.fail(f.RequestID, wire.CodeNotLeader, "moved", wire.Details{LeaderAddr: b.addr(), Shard: wire.U32(0)})
	})
	if _, err := c.PublishAtLeastOnce(testCtx(t), testStream, []byte("v")); err != nil {
		t.Fatal(err)
	}
	if na, nb := a.publishes.Load(), b.publishes.Load(); na != 3 || nb != 1 {
		t.Fatalf("a saw %d attempts and b %d; want 3 (two not_found, one redirect) and 1", na, nb)
	}
	if w := clk.waits(); len(w) != 2 {
		t.Fatalf("waits %v: want one backoff per not_found and none for the redirect", w)
	}
	if !slices.Contains(c.Brokers(), b.addr()) {
		t.Fatalf("the broker a redirect named is not among %v", c.Brokers())
	}
}

// The backoff between a cluster client's attempts is full jitter: each
// wait is drawn uniformly over [0, ceiling], the ceiling doubling from
// InitialBackoff to MaxBackoff. With a seeded source the waits are exactly
// the policy's draws, and over many draws they fill [0, ceiling] evenly.
func TestTheClusterBackoffIsFullJitterFromASeededSource(t *testing.T) {
	p := RetryPolicy{Attempts: 6, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond}
	a := newFakeMember(t)
	a.lists(a)
	a.answer(func(fc *fakeConn, f wire.Frame) { fc.fail(f.RequestID, wire.CodeOverloaded, "busy", wire.Details{}) })
	clk := &fakeClock{now: time.Unix(1000, 0)}
	src := rand.New(rand.NewPCG(1, 2))
	c := dialFakeCluster(t, []string{a.addr()}, withClock(clk), WithRetryPolicy(p), withRandN(src.Int64N))
	if _, err := c.PublishAtLeastOnce(testCtx(t), testStream, []byte("v")); !errors.Is(err, ErrRetriesExhausted) {
		t.Fatalf("got %v, want retries exhausted", err)
	}
	same := rand.New(rand.NewPCG(1, 2))
	var want []time.Duration
	for n := 1; n < p.Attempts; n++ {
		want = append(want, p.Backoff(n, same.Int64N))
	}
	if got := clk.waits(); !slices.Equal(got, want) {
		t.Fatalf("waits %v, want the seeded draws %v", got, want)
	}

	// The distribution: 20,000 draws under a 40ms ceiling, in 10 buckets.
	const draws, buckets = 20000, 10
	ceiling := p.Ceiling(3)
	var counts [buckets]int
	var lo, hi time.Duration = ceiling, 0
	for range draws {
		d := p.Backoff(3, src.Int64N)
		if d < 0 || d > ceiling {
			t.Fatalf("a wait of %v outside [0, %v]", d, ceiling)
		}
		lo, hi = min(lo, d), max(hi, d)
		counts[min(int(d*buckets/(ceiling+1)), buckets-1)]++
	}
	var chi2 float64
	for _, n := range counts {
		e := float64(draws) / buckets
		chi2 += (float64(n) - e) * (float64(n) - e) / e
	}
	// 9 degrees of freedom: 27.9 is the 0.999 quantile.
	if chi2 > 27.9 || lo > ceiling/100 || hi < ceiling*99/100 {
		t.Fatalf("draws not uniform over [0, %v]: buckets %v (chi2 %.1f), range [%v, %v]", ceiling, counts, chi2, lo, hi)
	}
}

// The policy's deadline bounds the whole operation, attempts and sleeps
// together, on the client's clock: each attempt here takes 300ms and each
// backoff 1s, so under a 5s deadline the fifth attempt (which would start
// at 5.2s) is never made.
func TestTheClusterDeadlineBoundsAttemptsAndSleeps(t *testing.T) {
	clk := &fakeClock{now: time.Unix(1000, 0)}
	start := clk.Now()
	a := newFakeMember(t)
	a.lists(a)
	a.answer(func(fc *fakeConn, f wire.Frame) {
		clk.advance(300 * time.Millisecond)
		fc.fail(f.RequestID, wire.CodeShuttingDown, "going", wire.Details{})
	})
	p := RetryPolicy{Attempts: 1000, InitialBackoff: time.Second, MaxBackoff: time.Second, Deadline: 5 * time.Second}
	c := dialFakeCluster(t, []string{a.addr()}, withClock(clk), WithRetryPolicy(p), withRandN(func(m int64) int64 { return m - 1 }))
	_, err := c.PublishAtLeastOnce(testCtx(t), testStream, []byte("v"))
	if !errors.Is(err, ErrRetryDeadline) || !errors.Is(err, ErrShuttingDown) {
		t.Fatalf("got %v, want the retry deadline on shutting_down", err)
	}
	if n := a.publishes.Load(); n != 4 {
		t.Fatalf("%d attempts, want 4", n)
	}
	if spent := clk.Now().Sub(start); spent > p.Deadline {
		t.Fatalf("%v spent on the clock, past the %v deadline", spent, p.Deadline)
	}
}

// A client whose every broker is down fails within its deadline, naming
// each broker it tried and why; nothing was sent.
func TestAClusterClientWithEveryBrokerDownFailsWithinItsDeadline(t *testing.T) {
	a, b := newFakeMember(t), newFakeMember(t)
	a.lists(a, b)
	p := RetryPolicy{Attempts: 1 << 20, InitialBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, Deadline: 200 * time.Millisecond}
	c := dialFakeCluster(t, []string{a.addr()}, WithRetryPolicy(p))
	a.close()
	b.close()
	start := time.Now()
	_, err := c.PublishAtLeastOnce(testCtx(t), testStream, []byte("v"))
	took := time.Since(start)
	if !errors.Is(err, ErrRetryDeadline) || !errors.Is(err, ErrNoBroker) || Ambiguous(err) {
		t.Fatalf("got %v, want the deadline on no broker reachable, not ambiguous", err)
	}
	for _, addr := range []string{a.addr(), b.addr()} {
		if !strings.Contains(err.Error(), addr) {
			t.Fatalf("the error does not name %s: %v", addr, err)
		}
	}
	if took > p.Deadline+time.Second {
		t.Fatalf("gave up after %v with a %v deadline", took, p.Deadline)
	}
	if _, err := DialCluster(testCtx(t), []string{a.addr(), b.addr()}); !errors.Is(err, ErrNoBroker) || !strings.Contains(err.Error(), b.addr()) {
		t.Fatalf("dialing a cluster that is down: %v, want no broker reachable naming both seeds", err)
	}
}

// Every failure no attempt can fix is returned by the cluster client at
// once, decided by its wire code: not tried again, and not at another
// broker either. not_found is the one refusal of a request's target that
// is retried (TestAClusterClientRetriesNotFoundAndFollowsARedirect).
func TestAClusterClientFailsFastOnEveryCodeNoAttemptCanFix(t *testing.T) {
	codes := []wire.Code{wire.CodeUnauthenticated, wire.CodeForbidden, wire.CodeOffsetBelowRetention,
		wire.CodeMalformedFrame, wire.CodeFrameTooLarge, wire.CodeLimitExceeded, wire.CodeInvalidArgument}
	for _, code := range codes {
		t.Run(code.String(), func(t *testing.T) {
			a, b := newFakeMember(t), newFakeMember(t)
			a.lists(a, b)
			refuse := func(fc *fakeConn, f wire.Frame) { fc.fail(f.RequestID, code, "no", wire.Details{}) }
			a.answer(refuse)
			b.answer(refuse)
			c := dialFakeCluster(t, []string{a.addr()}, tinyBackoff(RetryPolicy{Attempts: 10})...)
			_, err := c.PublishAtLeastOnce(testCtx(t), testStream, []byte("v"))
			if !errors.Is(err, code) || errors.Is(err, ErrRetriesExhausted) {
				t.Fatalf("got %v, want %v at once", err, code)
			}
			if n := a.publishes.Load() + b.publishes.Load(); n != 1 {
				t.Fatalf("%d attempts, want 1", n)
			}
		})
	}
}
