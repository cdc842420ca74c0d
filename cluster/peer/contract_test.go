package peer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// The contract every Transport keeps, run on TCP and on Mem (inside a
// synctest bubble).
var contract = []struct {
	name string
	test func(t *testing.T, h harness)
}{
	{"ARequestIsAnsweredAndTheHandlerKnowsTheSender", testRequestResponse},
	{"ManyRequestsInFlightAreEachAnsweredTheirOwn", testManyInFlight},
	{"AnAnswerGivenLaterFromAnotherGoroutineArrives", testLateAnswer},
	{"ALargeFrameCrossesBothWays", testLargeFrames},
	{"AFrameOverThePeersLimitIsNotSent", testFrameOverLimit},
	{"ABrokenFrameIsNotSent", testBrokenFrame},
	{"AnAnswerOverTheAskersLimitIsRefusedToTheHandler", testAnswerOverLimit},
	{"ACutLinkFailsRequestsWithinTheirContext", testCutLink},
	{"AHealedLinkWorksAgain", testHealedLink},
	{"APeerSpeakingAnOlderVersionIsRefused", testOldVersion},
	{"APeerWithoutBinaryKeyedPublishIsRefused", testNoSharedFeature},
	{"AFrameTheSessionDidNotNegotiateIsRefusedByThePeer", testNotNegotiated},
	{"RequestsOnOneLinkAreServedInTheOrderSent", testOrder},
	{"ARequestNeverAnsweredTimesOut", testTimeout},
	{"AnAbandonedCallsLateAnswerIsDropped", testAbandoned},
	{"WithoutAHandlerRequestsAreAnsweredOverloaded", testNoHandler},
	{"PastInflightMaxSendIsBusyAndCallWaits", testInflightMax},
	{"CloseFailsRequestsInFlight", testClose},
}

func TestContract(t *testing.T) {
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) {
			for _, c := range contract {
				t.Run(c.name, func(t *testing.T) { im.run(t, c.test) })
			}
		})
	}
}

const eventWait = 10 * time.Second // the bound on waiting for something that must happen

func testRequestResponse(t *testing.T, h harness) {
	a, b := h.join(t, "a", nil), h.join(t, "b", nil)
	froms := make(chan string, 2)
	b.Handle(HandlerFunc(func(f string, req wire.Frame, r Reply) {
		froms <- f
		echo(f, req, r)
	}))
	ctx, cancel := within(eventWait)
	defer cancel()
	ans, err := a.Call(ctx, "b", pub([]byte("hello")), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, from := valueOf(t, ans), <-froms; string(got) != "hello" || from != "a" || ans.RequestID == 0 {
		t.Fatalf("answer %q from the handler's %q, request id %d", got, from, ans.RequestID)
	}
	// The answer buffer is reused: pass it back as dst.
	again, err := a.Call(ctx, "b", pub([]byte("again")), ans.Body)
	if err != nil || string(valueOf(t, again)) != "again" {
		t.Fatalf("second call: %v", err)
	}
}

func testManyInFlight(t *testing.T, h harness) {
	a, b := h.join(t, "a", nil), h.join(t, "b", nil)
	b.Handle(echo)
	const senders, each = 16, 64
	var wg sync.WaitGroup
	errs := make(chan error, senders)
	for s := range senders {
		wg.Go(func() {
			ctx, cancel := within(eventWait)
			defer cancel()
			var dst []byte
			for i := range each {
				want := fmt.Sprintf("sender %d request %d", s, i)
				ans, err := a.Call(ctx, "b", pub([]byte(want)), dst)
				if err != nil {
					errs <- err
					return
				}
				if got := valueOf(t, ans); string(got) != want {
					errs <- fmt.Errorf("asked %q, answered %q", want, got)
					return
				}
				dst = ans.Body
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// And as many at once from one goroutine, answered in any order.
	out := make(chan outcome, 512)
	for i := range 512 {
		if err := a.Send(asyncCall("b", pub([]byte(strconv.Itoa(i))), 0, out)); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	for range 512 {
		o := receive(t, out, eventWait)
		if o.err != nil || seen[string(o.value)] {
			t.Fatalf("%q: %v (or answered twice)", o.value, o.err)
		}
		seen[string(o.value)] = true
	}
}

func testLateAnswer(t *testing.T, h harness) {
	a, b := h.join(t, "a", nil), h.join(t, "b", nil)
	hd := newHeld()
	b.Handle(hd)
	out := make(chan outcome, 4)
	for i := range 4 {
		if err := a.Send(asyncCall("b", pub([]byte{byte('0' + i)}), 0, out)); err != nil {
			t.Fatal(err)
		}
	}
	hd.await(t, 4, eventWait)
	go hd.answerAll()
	for range 4 {
		if o := receive(t, out, eventWait); o.err != nil || len(o.value) != 1 {
			t.Fatalf("%q: %v", o.value, o.err)
		}
	}
}

func testLargeFrames(t *testing.T, h harness) {
	a, b := h.join(t, "a", nil), h.join(t, "b", nil)
	b.Handle(echo)
	big := bytes.Repeat([]byte("0123456789abcdef"), 3<<20/16) // 3 MiB, many socket reads
	ctx, cancel := within(eventWait)
	defer cancel()
	for range 2 {
		ans, err := a.Call(ctx, "b", pub(big), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(valueOf(t, ans), big) {
			t.Fatal("the large answer differs from the request")
		}
	}
	// Small ones go on after it.
	if ans, err := a.Call(ctx, "b", pub([]byte("small")), nil); err != nil || string(valueOf(t, ans)) != "small" {
		t.Fatalf("after a large frame: %v", err)
	}
}

func testFrameOverLimit(t *testing.T, h harness) {
	a := h.join(t, "a", nil)
	b := h.join(t, "b", func(s *speaks) { s.frameBytesMax = 64 << 10 })
	hd := newHeld()
	b.Handle(hd)
	if err := a.Send(asyncCall("b", pub([]byte("first, within the limit")), 0, make(chan outcome, 1))); err != nil {
		t.Fatal(err)
	}
	hd.await(t, 1, eventWait) // the session is up: b's limit is known
	ctx, cancel := within(eventWait)
	defer cancel()
	_, err := a.Call(ctx, "b", pub(make([]byte, 64<<10)), nil)
	wantErr(t, err, ErrNotSent, ErrBadFrame)
	if !errors.Is(err, wire.CodeFrameTooLarge) {
		t.Fatalf("%v: no frame_too_large", err)
	}
	err = a.Send(asyncCall("b", pub(make([]byte, 64<<10)), 0, nil))
	wantErr(t, err, ErrNotSent, wire.CodeFrameTooLarge)
	select {
	case <-hd.arrived:
		t.Fatal("the handler saw a frame over its limit")
	default:
	}
}

func testBrokenFrame(t *testing.T, h harness) {
	a, b := h.join(t, "a", nil), h.join(t, "b", nil)
	b.Handle(echo)
	ok := pub([]byte("v"))
	ctx, cancel := within(eventWait)
	defer cancel()
	for name, req := range map[string][]byte{
		"empty":          nil,
		"a header alone": ok[:wire.HeaderSize],
		"two frames":     append(slices.Clone(ok), ok...),
		"unknown type":   wire.AppendFrame(nil, wire.Type(0x0777), 0, 0, nil),
		"a handshake":    wire.AppendPeerHello(nil, 0, wire.PeerHello{VersionMin: 1, VersionMax: 1, BrokerID: []byte("x")}),
	} {
		if _, err := a.Call(ctx, "b", req, nil); !errors.Is(err, ErrBadFrame) || !errors.Is(err, ErrNotSent) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if ans, err := a.Call(ctx, "b", ok, nil); err != nil || string(valueOf(t, ans)) != "v" {
		t.Fatalf("a good frame after the bad ones: %v", err)
	}
}

func testCutLink(t *testing.T, h harness) {
	a, b := h.join(t, "a", nil), h.join(t, "b", nil)
	b.Handle(echo)
	ctx, cancel := within(eventWait)
	defer cancel()
	if _, err := a.Call(ctx, "b", pub([]byte("up")), nil); err != nil {
		t.Fatal(err)
	}
	h.cut("a", "b")
	const bound = 300 * time.Millisecond
	for i := range 3 {
		start := time.Now()
		ctx, cancel := within(bound)
		_, err := a.Call(ctx, "b", pub([]byte("cut")), nil)
		cancel()
		if took := time.Since(start); err == nil || took > bound+eventWait/10 {
			t.Fatalf("call %d over a cut link: %v after %v", i, err, took)
		}
		if !errors.Is(err, ErrNotSent) && !errors.Is(err, ErrOutcomeUnknown) {
			t.Fatalf("call %d: %v says neither sent nor not", i, err)
		}
	}
	// b's requests to a fail too.
	a.Handle(echo)
	ctx2, cancel2 := within(bound)
	defer cancel2()
	if _, err := b.Call(ctx2, "a", pub([]byte("cut")), nil); err == nil {
		t.Fatal("b reached a over a cut link")
	}
}

func testHealedLink(t *testing.T, h harness) {
	a, b := h.join(t, "a", nil), h.join(t, "b", nil)
	b.Handle(echo)
	ctx, cancel := within(eventWait)
	defer cancel()
	if _, err := a.Call(ctx, "b", pub([]byte("up")), nil); err != nil {
		t.Fatal(err)
	}
	h.cut("a", "b")
	short, cancelShort := within(200 * time.Millisecond)
	_, err := a.Call(short, "b", pub([]byte("cut")), nil)
	cancelShort()
	if err == nil {
		t.Fatal("a call over a cut link succeeded")
	}
	h.heal("a", "b")
	for i := range 3 {
		if ans, err := a.Call(ctx, "b", pub([]byte("healed")), nil); err != nil || string(valueOf(t, ans)) != "healed" {
			t.Fatalf("call %d after the heal: %v", i, err)
		}
	}
}

func testOldVersion(t *testing.T, h harness) {
	old := func(s *speaks) { s.versionMin, s.versionMax = 0, 0 }
	a, b, o := h.join(t, "a", nil), h.join(t, "b", nil), h.join(t, "old", old)
	hd := newHeld()
	a.Handle(hd)
	b.Handle(hd)
	o.Handle(hd)
	ctx, cancel := within(eventWait)
	defer cancel()
	_, err := o.Call(ctx, "b", pub([]byte("from the past")), nil)
	wantErr(t, err, ErrNotSent, ErrRefused)
	if !errors.Is(err, wire.CodeUnsupportedVersion) {
		t.Fatalf("the old broker's call: %v", err)
	}
	_, err = a.Call(ctx, "old", pub([]byte("to the past")), nil)
	wantErr(t, err, ErrNotSent, ErrRefused)
	if !errors.Is(err, wire.CodeUnsupportedVersion) {
		t.Fatalf("a call to the old broker: %v", err)
	}
	select {
	case <-hd.arrived:
		t.Fatal("a handler saw a request of a refused session")
	default:
	}
}

func testNoSharedFeature(t *testing.T, h harness) {
	bare := func(s *speaks) { s.features = wire.FeatureBinaryPublish | wire.FeatureCache }
	a, n := h.join(t, "a", nil), h.join(t, "noKeyed", bare)
	a.Handle(echo)
	n.Handle(echo)
	ctx, cancel := within(eventWait)
	defer cancel()
	for _, c := range []struct{ from, to Transport }{{n, a}, {a, n}} {
		_, err := c.from.Call(ctx, c.to.ID(), pub([]byte("v")), nil)
		wantErr(t, err, ErrNotSent, ErrRefused)
		var e *wire.Error
		if !errors.As(err, &e) || (e.Code != wire.CodeFeatureNotNegotiated && e.Code != wire.CodeInvalidArgument) {
			t.Fatalf("%s to %s: %v", c.from.ID(), c.to.ID(), err)
		}
	}
}

func testNotNegotiated(t *testing.T, h harness) {
	a := h.join(t, "a", nil)
	b := h.join(t, "b", func(s *speaks) { s.features = wire.PeerFeaturesRequired })
	hd := newHeld()
	b.Handle(hd)
	ctx, cancel := within(eventWait)
	defer cancel()
	get := wire.AppendCacheGet(nil, 0, wire.CacheGet{Cache: wire.CacheRef{Tenant: []byte("t"), Namespace: []byte("n"), Cache: []byte("c")}, Key: []byte("k")})
	ans, err := a.Call(ctx, "b", get, nil)
	if err != nil || ans.Type != wire.TypeError {
		t.Fatalf("answer %v, err %v", ans.Type, err)
	}
	var e wire.Error
	if err := e.Decode(ans, wire.Limits{}); err != nil || e.Code != wire.CodeFeatureNotNegotiated || e.Details.Feature != wire.FeatureCache {
		t.Fatalf("%+v, %v", e, err)
	}
	select {
	case <-hd.arrived:
		t.Fatal("the handler saw a frame the session did not negotiate")
	default:
	}
}

func testOrder(t *testing.T, h harness) {
	a, b := h.join(t, "a", nil), h.join(t, "b", nil)
	var mu sync.Mutex
	var order []string
	b.Handle(HandlerFunc(func(from string, req wire.Frame, r Reply) {
		mu.Lock()
		order = append(order, string(valueOf(t, req)))
		mu.Unlock()
		echo(from, req, r)
	}))
	const n = 1000
	out := make(chan outcome, n)
	var sent []string
	for i := range n {
		v := strconv.Itoa(i)
		sent = append(sent, v)
		if err := a.Send(asyncCall("b", pub([]byte(v)), 0, out)); err != nil {
			t.Fatal(err)
		}
	}
	for range n {
		if o := receive(t, out, eventWait); o.err != nil {
			t.Fatal(o.err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(order, sent) {
		t.Fatalf("served out of order: first %v", order[:min(20, len(order))])
	}
}

func testTimeout(t *testing.T, h harness) {
	a, b := h.join(t, "a", nil), h.join(t, "b", nil)
	hd := newHeld()
	b.Handle(hd)
	out := make(chan outcome, 1)
	start := time.Now()
	if err := a.Send(asyncCall("b", pub([]byte("never answered")), 100*time.Millisecond, out)); err != nil {
		t.Fatal(err)
	}
	o := receive(t, out, eventWait)
	if took := time.Since(start); took < 100*time.Millisecond {
		t.Fatalf("timed out after %v", took)
	}
	wantErr(t, o.err, ErrOutcomeUnknown, ErrTimeout)
	// The answer, when it comes at last, is dropped; the link works on.
	hd.await(t, 1, eventWait)
	hd.answerAll()
	b.Handle(echo)
	ctx, cancel := within(eventWait)
	defer cancel()
	if _, err := a.Call(ctx, "b", pub([]byte("after")), nil); err != nil {
		t.Fatal(err)
	}
	select {
	case o := <-out:
		t.Fatalf("a second outcome for one request: %+v", o)
	default:
	}
}

func testAbandoned(t *testing.T, h harness) {
	a, b := h.join(t, "a", nil), h.join(t, "b", nil)
	hd := newHeld()
	b.Handle(hd)
	short, cancel := within(50 * time.Millisecond)
	_, err := a.Call(short, "b", pub([]byte("abandoned")), nil)
	cancel()
	wantErr(t, err, ErrOutcomeUnknown, context.DeadlineExceeded)
	hd.await(t, 1, eventWait)
	hd.answerAll() // late: dropped
	b.Handle(echo)
	ctx, cancel2 := within(eventWait)
	defer cancel2()
	for i := range 3 {
		v := "next " + strconv.Itoa(i)
		if ans, err := a.Call(ctx, "b", pub([]byte(v)), nil); err != nil || string(valueOf(t, ans)) != v {
			t.Fatalf("%s: %v (a late answer taken for a newer request?)", v, err)
		}
	}
}

func testNoHandler(t *testing.T, h harness) {
	a, _ := h.join(t, "a", nil), h.join(t, "b", nil)
	ctx, cancel := within(eventWait)
	defer cancel()
	ans, err := a.Call(ctx, "b", pub([]byte("v")), nil)
	var e wire.Error
	if err != nil || ans.Type != wire.TypeError || e.Decode(ans, wire.Limits{}) != nil || e.Code != wire.CodeOverloaded {
		t.Fatalf("answer %v (%v), err %v", ans.Type, e.Code, err)
	}
}

func testInflightMax(t *testing.T, h harness) {
	a := h.join(t, "a", func(s *speaks) { s.inflightMax = 8 })
	b := h.join(t, "b", nil)
	hd := newHeld()
	b.Handle(hd)
	out := make(chan outcome, 16)
	for i := range 8 {
		if err := a.Send(asyncCall("b", pub([]byte{byte(i)}), 0, out)); err != nil {
			t.Fatal(err)
		}
	}
	hd.await(t, 8, eventWait)
	wantErr(t, a.Send(asyncCall("b", pub([]byte("ninth")), 0, out)), ErrNotSent, ErrBusy)
	called := make(chan error, 1)
	go func() {
		ctx, cancel := within(eventWait)
		defer cancel()
		_, err := a.Call(ctx, "b", pub([]byte("waits for a slot")), nil)
		called <- err
	}()
	hd.answerAll() // frees the slots: the waiting Call goes
	hd.await(t, 1, eventWait)
	hd.answerAll()
	if err := <-called; err != nil {
		t.Fatal(err)
	}
	for range 8 {
		if o := receive(t, out, eventWait); o.err != nil {
			t.Fatal(o.err)
		}
	}
}

func testClose(t *testing.T, h harness) {
	a, b := h.join(t, "a", nil), h.join(t, "b", nil)
	hd := newHeld()
	b.Handle(hd)
	out := make(chan outcome, 4)
	for range 4 {
		if err := a.Send(asyncCall("b", pub([]byte("v")), 0, out)); err != nil {
			t.Fatal(err)
		}
	}
	hd.await(t, 4, eventWait)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		wantErr(t, receive(t, out, eventWait).err, ErrOutcomeUnknown, ErrClosed)
	}
	ctx, cancel := within(eventWait)
	defer cancel()
	_, err := a.Call(ctx, "b", pub([]byte("after")), nil)
	wantErr(t, err, ErrNotSent, ErrClosed)
}

func testAnswerOverLimit(t *testing.T, h harness) {
	a := h.join(t, "a", func(s *speaks) { s.frameBytesMax = 64 << 10 })
	b := h.join(t, "b", nil)
	refusals := make(chan error, 1)
	b.Handle(HandlerFunc(func(_ string, req wire.Frame, r Reply) {
		err := r.Answer(pub(make([]byte, 64<<10)))
		refusals <- err
		if err != nil {
			answerError(r, &wire.Error{Code: wire.CodeLimitExceeded, Message: err.Error()})
		}
	}))
	ctx, cancel := within(eventWait)
	defer cancel()
	ans, err := a.Call(ctx, "b", pub([]byte("v")), nil)
	if err != nil || ans.Type != wire.TypeError {
		t.Fatalf("answer %v, err %v", ans.Type, err)
	}
	if err := <-refusals; !errors.Is(err, ErrBadFrame) || !errors.Is(err, wire.CodeFrameTooLarge) {
		t.Fatalf("Answer over the limit: %v", err)
	}
}
