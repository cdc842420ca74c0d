package peer

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// memPair is brokers a and b on a new network, closed with the test.
func memPair(t *testing.T, opts NetworkOptions) (n *Network, a, b *Mem) {
	t.Helper()
	n = NewNetwork(opts)
	t.Cleanup(n.Close)
	var err error
	if a, err = n.Join("a"); err != nil {
		t.Fatal(err)
	}
	if b, err = n.Join("b"); err != nil {
		t.Fatal(err)
	}
	return n, a, b
}

// recorder is a handler that keeps the values it is asked, in order, and
// answers with the request.
type recorder struct {
	mu     sync.Mutex
	values []string
}

func (r *recorder) ServePeer(from string, req wire.Frame, rep Reply) {
	var p wire.Publish
	if p.Decode(req, wire.Limits{}) == nil {
		it := p.Records()
		it.Next()
		r.mu.Lock()
		r.values = append(r.values, string(it.Record().Value))
		r.mu.Unlock()
	}
	echo(from, req, rep)
}

func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.values)
}

func TestMemDelayHoldsEveryMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, a, b := memPair(t, NetworkOptions{})
		b.Handle(echo)
		n.SetFaults("a", "b", Faults{Delay: 10 * time.Millisecond})
		n.SetFaults("b", "a", Faults{Delay: 15 * time.Millisecond})
		start := time.Now()
		ctx, cancel := within(time.Second)
		defer cancel()
		if _, err := a.Call(ctx, "b", pub([]byte("v")), nil); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took != 25*time.Millisecond {
			t.Fatalf("the round trip took %v, want 25ms", took)
		}
	})
}

func TestMemDeliversInTheOrderTheTestChooses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, a, b := memPair(t, NetworkOptions{Manual: true})
		rec := &recorder{}
		b.Handle(rec)
		out := make(chan outcome, 2)
		for _, v := range []string{"first", "second"} {
			if err := a.Send(asyncCall("b", pub([]byte(v)), 0, out)); err != nil {
				t.Fatal(err)
			}
		}
		p := n.Pending()
		if len(p) != 2 || p[0].Answer || p[0].From != "a" || p[0].Type != wire.TypePublish || p[0].RequestID == 0 {
			t.Fatalf("pending %+v", p)
		}
		n.Deliver(p[1].Seq)
		n.Deliver(p[0].Seq)
		if got := rec.seen(); !slices.Equal(got, []string{"second", "first"}) {
			t.Fatalf("served %v", got)
		}
		if answers := n.Pending(); len(answers) != 2 || !answers[0].Answer || answers[0].To != "a" {
			t.Fatalf("answers pending %+v", answers)
		}
		select {
		case o := <-out:
			t.Fatalf("completed before its answer was delivered: %+v", o)
		default:
		}
		if got := n.Drain(); got != 2 {
			t.Fatalf("drained %d", got)
		}
		for range 2 {
			if o := <-out; o.err != nil {
				t.Fatal(o.err)
			}
		}
	})
}

func TestMemReorderLetsAMessageOvertakeTheOneBefore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, a, b := memPair(t, NetworkOptions{Manual: true})
		rec := &recorder{}
		b.Handle(rec)
		n.SetFaults("a", "b", Faults{Reorder: 1})
		for _, v := range []string{"1", "2", "3"} {
			if err := a.Send(asyncCall("b", pub([]byte(v)), 0, make(chan outcome, 1))); err != nil {
				t.Fatal(err)
			}
		}
		n.Drain()
		if got := rec.seen(); !slices.Equal(got, []string{"3", "2", "1"}) {
			t.Fatalf("served %v: each should overtake the one before", got)
		}
	})
}

func TestMemDuplicateDeliversTwiceAndOneAnswerCompletesTheRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, a, b := memPair(t, NetworkOptions{})
		rec := &recorder{}
		b.Handle(rec)
		n.SetFaults("a", "b", Faults{Duplicate: 1})
		n.SetFaults("b", "a", Faults{Duplicate: 1})
		out := make(chan outcome, 4)
		if err := a.Send(asyncCall("b", pub([]byte("once")), 0, out)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := rec.seen(); !slices.Equal(got, []string{"once", "once"}) {
			t.Fatalf("served %v", got)
		}
		if len(out) != 1 {
			t.Fatalf("%d outcomes for one request (four answers were delivered)", len(out))
		}
	})
}

func TestMemCutOneWayLosesOnlyThatDirection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, a, b := memPair(t, NetworkOptions{})
		recA, recB := &recorder{}, &recorder{}
		a.Handle(recA)
		b.Handle(recB)
		n.CutOneWay("a", "b")
		ctx, cancel := within(time.Second)
		defer cancel()
		_, err := a.Call(ctx, "b", pub([]byte("a to b")), nil)
		wantErr(t, err, ErrOutcomeUnknown, nil)
		ctx2, cancel2 := within(time.Second)
		defer cancel2()
		_, err = b.Call(ctx2, "a", pub([]byte("b to a")), nil)
		wantErr(t, err, ErrOutcomeUnknown, nil) // its answer, a to b, is lost
		if got, none := recA.seen(), recB.seen(); !slices.Equal(got, []string{"b to a"}) || len(none) != 0 {
			t.Fatalf("a served %v, b served %v", got, none)
		}
	})
}

func TestMemACutLosesTheMessagesAlreadyQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, a, b := memPair(t, NetworkOptions{Manual: true})
		rec := &recorder{}
		b.Handle(rec)
		if err := a.Send(asyncCall("b", pub([]byte("in flight")), 0, make(chan outcome, 1))); err != nil {
			t.Fatal(err)
		}
		n.Cut("a", "b")
		n.Drain()
		n.Heal("a", "b")
		n.Drain()
		if got := rec.seen(); len(got) != 0 || len(n.Pending()) != 0 {
			t.Fatalf("served %v, pending %v", got, n.Pending())
		}
	})
}

func TestMemDisconnectFailsRequestsInFlightAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, a, b := memPair(t, NetworkOptions{})
		hd := newHeld()
		b.Handle(hd)
		out := make(chan outcome, 3)
		for range 3 {
			if err := a.Send(asyncCall("b", pub([]byte("v")), 0, out)); err != nil {
				t.Fatal(err)
			}
		}
		hd.await(t, 3, time.Second)
		start := time.Now()
		n.Disconnect("a", "b")
		for range 3 {
			wantErr(t, (<-out).err, ErrOutcomeUnknown, ErrConnectionLost)
		}
		if time.Since(start) != 0 {
			t.Fatal("a disconnect waited")
		}
		hd.answerAll() // answers of the old connection: lost
		b.Handle(echo)
		ctx, cancel := within(time.Second)
		defer cancel()
		if _, err := a.Call(ctx, "b", pub([]byte("reconnected")), nil); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if len(out) != 0 {
			t.Fatal("an answer of the old connection completed a request")
		}
	})
}

func TestMemABrokerThatLeavesFailsTheRequestsToIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, a, b := memPair(t, NetworkOptions{})
		b.Handle(newHeld())
		out := make(chan outcome, 1)
		if err := a.Send(asyncCall("b", pub([]byte("v")), 0, out)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		_ = b.Close()
		wantErr(t, (<-out).err, ErrOutcomeUnknown, ErrConnectionLost)
		ctx, cancel := within(time.Second)
		defer cancel()
		_, err := a.Call(ctx, "b", pub([]byte("v")), nil)
		wantErr(t, err, ErrNotSent, ErrUnreachable)
		b2, err := n.Join("b")
		if err != nil {
			t.Fatal(err)
		}
		b2.Handle(echo)
		if _, err := a.Call(ctx, "b", pub([]byte("restarted")), nil); err != nil {
			t.Fatal(err)
		}
	})
}

// faultyRun is a seeded run on a network dropping, duplicating, reordering
// and delaying messages, delivered in an order drawn from the same seed:
// what each broker served, in order, and each request's outcome.
func faultyRun(t *testing.T, seed uint64) (served []string, outcomes []string) {
	synctest.Test(t, func(t *testing.T) {
		n := NewNetwork(NetworkOptions{Manual: true, Seed: seed})
		defer n.Close()
		brokers := map[string]*Mem{}
		recs := map[string]*recorder{}
		for _, id := range []string{"a", "b", "c"} {
			m, err := n.Join(id)
			if err != nil {
				t.Fatal(err)
			}
			brokers[id], recs[id] = m, &recorder{}
			m.Handle(recs[id])
		}
		f := Faults{Drop: 0.2, Duplicate: 0.2, Reorder: 0.3, Delay: time.Millisecond}
		for _, r := range []route{{"a", "b"}, {"b", "a"}, {"a", "c"}, {"c", "a"}, {"b", "c"}, {"c", "b"}} {
			n.SetFaults(r.from, r.to, f)
		}
		pick := rand.New(rand.NewPCG(seed, 7))
		results := make([]string, 30)
		for i := range results {
			from, to := []string{"a", "b", "c"}[i%3], []string{"b", "c", "a"}[i%3]
			v := from + strconv.Itoa(i)
			c := &Call{To: to, Request: pub([]byte(v)), Timeout: time.Second, Done: func(_ *Call, f wire.Frame, err error) {
				results[i] = v + ": " + errString(err, f)
			}}
			if err := brokers[from].Send(c); err != nil {
				t.Fatal(err)
			}
			for p := n.Pending(); len(p) > 0 && pick.IntN(3) == 0; p = n.Pending() {
				n.Deliver(p[pick.IntN(len(p))].Seq)
			}
		}
		for p := n.Pending(); len(p) > 0; p = n.Pending() {
			n.Deliver(p[pick.IntN(len(p))].Seq)
		}
		time.Sleep(2 * time.Second) // the bubble's time: the lost requests time out
		synctest.Wait()
		for _, id := range []string{"a", "b", "c"} {
			served = append(served, id+" "+strings.Join(recs[id].seen(), ","))
		}
		outcomes = results
	})
	return served, outcomes
}

func errString(err error, f wire.Frame) string {
	switch {
	case errors.Is(err, ErrTimeout):
		return "timed out"
	case err != nil:
		return err.Error()
	}
	return "answered " + f.Type.String()
}

func TestMemARunReplaysFromItsSeed(t *testing.T) {
	served1, out1 := faultyRun(t, 42)
	served2, out2 := faultyRun(t, 42)
	if !slices.Equal(served1, served2) || !slices.Equal(out1, out2) {
		t.Fatalf("one seed, two histories:\n%v\n%v\n%v\n%v", served1, served2, out1, out2)
	}
	served3, out3 := faultyRun(t, 43)
	if slices.Equal(served1, served3) && slices.Equal(out1, out3) {
		t.Fatal("another seed, the same history: the faults ignore the seed")
	}
	timedOut, answered := 0, 0
	for _, o := range out1 {
		switch {
		case strings.HasSuffix(o, "timed out"):
			timedOut++
		case strings.HasSuffix(o, "answered PUBLISH"):
			answered++
		}
	}
	if timedOut == 0 || answered == 0 || timedOut+answered != len(out1) {
		t.Fatalf("%d timed out, %d answered of %d: %v", timedOut, answered, len(out1), out1)
	}
}

func TestMemAFrozenBrokerHoldsItsMessagesUntilThawed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, a, b := memPair(t, NetworkOptions{})
		rec := &recorder{}
		b.Handle(rec)
		n.Freeze("b")
		out := make(chan outcome, 2)
		for _, v := range []string{"1", "2"} {
			if err := a.Send(asyncCall("b", pub([]byte(v)), 10*time.Second, out)); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if got, p := rec.seen(), n.Pending(); len(got) != 0 || len(p) != 2 {
			t.Fatalf("frozen, yet served %v; pending %v", got, p)
		}
		n.Thaw("b")
		for range 2 {
			if o := <-out; o.err != nil {
				t.Fatal(o.err)
			}
		}
		if got := rec.seen(); !slices.Equal(got, []string{"1", "2"}) {
			t.Fatalf("served %v after the thaw", got)
		}
	})
}
