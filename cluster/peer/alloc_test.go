package peer

import (
	"context"
	"sync"
	"testing"

	"github.com/felixbroker/felix/netio/wire"
)

// echoer answers every request with its own frame from a buffer it
// reuses, so the handler allocates nothing either.
type echoer struct {
	mu  sync.Mutex
	buf []byte
}

func (e *echoer) ServePeer(_ string, req wire.Frame, r Reply) {
	e.mu.Lock()
	e.buf = wire.AppendFrame(e.buf[:0], req.Type, req.Flags, 0, req.Body)
	_ = r.Answer(e.buf)
	e.mu.Unlock()
}

// TestARequestAllocatesNothing: a round trip over loopback TCP, both
// brokers in this process (every goroutine's allocations count), in
// steady state: Call, and Send with a reused Call record, answered on the
// loop; and Call answered later from another goroutine, as a forwarded
// publish is by its owner's log committer.
func TestARequestAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	a, b := pair(t, nil)
	b.Handle(&echoer{})
	ctx := context.Background()
	req := pub(make([]byte, 1024))
	var dst []byte
	call := func() {
		ans, err := a.Call(ctx, "b", req, dst)
		if err != nil {
			t.Fatal(err)
		}
		dst = ans.Body
	}
	for range 100 {
		call()
	}
	if n := testing.AllocsPerRun(2000, call); n != 0 {
		t.Errorf("Call: %v allocations per request", n)
	}
	done := make(chan error, 1)
	c := &Call{To: "b", Request: req, Done: func(_ *Call, _ wire.Frame, err error) { done <- err }}
	send := func() {
		if err := a.Send(c); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	for range 100 {
		send()
	}
	if n := testing.AllocsPerRun(2000, send); n != 0 {
		t.Errorf("Send: %v allocations per request", n)
	}
	b.Handle(answerLater(t))
	for range 100 {
		call()
	}
	if n := testing.AllocsPerRun(2000, call); n != 0 {
		t.Errorf("Call answered later: %v allocations per request", n)
	}
}

// answerLater is a handler whose answers a goroutine of its own gives,
// until the test ends.
func answerLater(t *testing.T) Handler {
	type job struct {
		r     Reply
		frame []byte
	}
	jobs := make(chan job, 64)
	frames := make(chan []byte, 64)
	for range 64 {
		frames <- nil
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { close(jobs); wg.Wait() })
	wg.Go(func() {
		for j := range jobs {
			_ = j.r.Answer(j.frame)
			frames <- j.frame
		}
	})
	return HandlerFunc(func(_ string, req wire.Frame, r Reply) {
		frame := wire.AppendFrame((<-frames)[:0], req.Type, req.Flags, 0, req.Body)
		jobs <- job{r: r, frame: frame}
	})
}
