package client

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// expiring is a caller's context whose deadline passes when the test says
// so (expire), at the moment of an event rather than after a sleep.
type expiring struct {
	context.Context // Value
	once            sync.Once
	done            chan struct{}
}

func newExpiring(t *testing.T) *expiring {
	return &expiring{Context: testCtx(t), done: make(chan struct{})}
}

func (e *expiring) Deadline() (time.Time, bool) { return time.Time{}, false }
func (e *expiring) Done() <-chan struct{}       { return e.done }
func (e *expiring) expire()                     { e.once.Do(func() { close(e.done) }) }

func (e *expiring) Err() error {
	select {
	case <-e.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// dieOnPublish makes m drop the connection of the next publish it reads
// (the broker dies holding it: an ambiguous failure), refusing the next
// hellos HELLOs after it shutting_down.
func dieOnPublish(m *fakeMember, hellos int64, then func(fc *fakeConn, f wire.Frame)) {
	var once sync.Once
	m.answer(func(fc *fakeConn, f wire.Frame) {
		died := false
		once.Do(func() {
			died = true
			m.shutting.Store(hellos)
			_ = fc.nc.Close()
		})
		if !died && then != nil {
			then(fc, f)
		}
	})
}

// A cluster publish whose first try reaches no broker (not sent) and
// whose second is sent and then cut short by the caller's deadline may
// have been applied: its error is Ambiguous, not the first try's "not
// sent", and still names both the deadline and the broker not reached.
func TestAClusterPublishCutShortAfterATryNotSentIsAmbiguous(t *testing.T) {
	a := newFakeMember(t)
	a.lists(a)
	clk := &fakeClock{now: time.Unix(1000, 0)} // still: the failed describe is not asked again
	c := dialFakeCluster(t, []string{a.addr()}, withClock(clk), withRandN(func(int64) int64 { return 0 }))
	ctx := newExpiring(t)
	dieOnPublish(a, 1, func(fc *fakeConn, f wire.Frame) { ctx.expire() }) // held, never answered
	if _, err := c.Publish(testCtx(t), testStream, []byte("lost")); !Ambiguous(err) {
		t.Fatalf("publish whose broker died: %v, want ambiguous", err)
	}
	_, err := c.Publish(ctx, testStream, []byte("v"))
	if n := a.publishes.Load(); n != 2 {
		t.Fatalf("a saw %d publishes, want the lost one and the one cut short", n)
	}
	if !Ambiguous(err) || errors.Is(err, ErrNotSent) {
		t.Fatalf("publish cut short after a try not sent: %v, want ambiguous and not ErrNotSent", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrNoBroker) {
		t.Fatalf("publish cut short: %v, want the deadline and the broker not reached both found", err)
	}
	if !strings.Contains(err.Error(), a.addr()) || !strings.Contains(err.Error(), "shutting_down") {
		t.Fatalf("the error does not name %s and why it was not reached: %v", a.addr(), err)
	}
}

// An at-least-once cluster publish whose first try may have landed and
// whose last reached no broker has an Ambiguous error: the retries ran
// out, but the record may be stored.
func TestAClusterAtLeastOncePublishThatMayHaveLandedStaysAmbiguous(t *testing.T) {
	a := newFakeMember(t)
	a.lists(a)
	clk := &fakeClock{now: time.Unix(1000, 0)}
	c := dialFakeCluster(t, []string{a.addr()}, withClock(clk), withRandN(func(int64) int64 { return 0 }),
		WithRetryPolicy(RetryPolicy{Attempts: 2}))
	dieOnPublish(a, 1<<20, nil)
	_, err := c.PublishAtLeastOnce(testCtx(t), testStream, []byte("v"))
	if !errors.Is(err, ErrRetriesExhausted) || !errors.Is(err, ErrNoBroker) || !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("got %v, want retries exhausted on no broker, after a lost connection", err)
	}
	if !Ambiguous(err) || errors.Is(err, ErrNotSent) {
		t.Fatalf("got %v, want ambiguous and not ErrNotSent: the first try may have landed", err)
	}
	if n := a.publishes.Load(); n != 1 {
		t.Fatalf("a saw %d publishes, want 1", n)
	}
}

// The single broker's PublishAtLeastOnce, the same: a lost answer, then
// attempts refused shutting_down (a code that proves nothing was applied
// of that attempt), is Ambiguous.
func TestAnAtLeastOncePublishThatMayHaveLandedStaysAmbiguous(t *testing.T) {
	m := newFakeMember(t)
	c := dialFake(t, m.fakeBroker, tinyBackoff(RetryPolicy{Attempts: 3})...)
	dieOnPublish(m, 1<<20, nil)
	_, err := c.PublishAtLeastOnce(testCtx(t), testStream, []byte("v"))
	if !errors.Is(err, ErrRetriesExhausted) || !errors.Is(err, ErrShuttingDown) || !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("got %v, want retries exhausted on shutting_down, after a lost connection", err)
	}
	if !Ambiguous(err) {
		t.Fatalf("got %v, want ambiguous: the first attempt may have landed", err)
	}
}

// A Producer's batch given up on after a send that may have landed is
// Ambiguous whatever its last failure: here a resend refused
// shutting_down at the handshake.
func TestAProducerBatchOfUnknownOutcomeIsAmbiguous(t *testing.T) {
	for _, last := range []error{
		&ServerError{Code: Code(wire.CodeProducerUnknown), Name: "producer_unknown"},
		notSent(context.Canceled),
		&UnreachableError{},
	} {
		err := error(&UnknownOutcomeError{Err: last})
		if !Ambiguous(err) || errors.Is(err, ErrNotSent) || !errors.Is(err, ErrUnknownOutcome) || !errors.Is(err, last) {
			t.Errorf("%v: ambiguous %v, not sent %v; want ambiguous, not ErrNotSent, and the last failure found",
				err, Ambiguous(err), errors.Is(err, ErrNotSent))
		}
	}
}

// worst keeps a failure that proves nothing as it is, and one after a try
// of unknown outcome becomes Ambiguous.
func TestTheWorstOutcomeOfTheTriesIsReported(t *testing.T) {
	lost := &fromBroker{addr: "b1", err: ErrConnectionLost}
	unreachable := &UnreachableError{Tried: []BrokerFailure{{Addr: "b2", Err: errTest}}}
	if err := worst(unreachable, nil); err != unreachable || Ambiguous(err) {
		t.Fatalf("no try of unknown outcome: %v, want the failure as it is", err)
	}
	err := worst(unreachable, lost)
	if !Ambiguous(err) || errors.Is(err, ErrNotSent) || !errors.Is(err, ErrNoBroker) || !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("after a lost answer: %v, want ambiguous, both failures found, not ErrNotSent", err)
	}
	for _, s := range []string{"b1", "b2", errTest.Error()} {
		if !strings.Contains(err.Error(), s) {
			t.Fatalf("%q not in %v", s, err)
		}
	}
	var ue *UnreachableError
	if !errors.As(err, &ue) || ue != unreachable {
		t.Fatalf("errors.As does not find the *UnreachableError in %v", err)
	}
	if again := worst(lost, unreachable); again != lost {
		t.Fatalf("an ambiguous failure: %v, want it as it is", again)
	}
}
