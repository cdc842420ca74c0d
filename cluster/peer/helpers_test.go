package peer

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

var testStream = wire.StreamRef{Tenant: []byte("acme"), Namespace: []byte("prod"), Stream: []byte("orders")}

// pub is a keyed PUBLISH of value: what a forwarding broker sends.
func pub(value []byte) []byte {
	return wire.AppendPublish(nil, 0, testStream, wire.AckPerMessage, wire.Record{Key: []byte("k"), Value: value})
}

// valueOf is the value of a PUBLISH's first record.
func valueOf(t testing.TB, f wire.Frame) []byte {
	t.Helper()
	var p wire.Publish
	if err := p.Decode(f, wire.Limits{FrameBytesMax: DefaultFrameBytesMax}); err != nil {
		t.Fatalf("%v frame: %v", f.Type, err)
	}
	it := p.Records()
	it.Next()
	return it.Record().Value
}

// echo answers every request with its own frame.
var echo = HandlerFunc(func(_ string, req wire.Frame, r Reply) {
	_ = r.Answer(wire.AppendFrame(nil, req.Type, req.Flags, 0, req.Body))
})

// held is a handler that keeps its requests unanswered until the test says.
type held struct {
	mu      sync.Mutex
	replies []Reply
	frames  [][]byte
	arrived chan struct{} // a token per request
}

func newHeld() *held { return &held{arrived: make(chan struct{}, 1<<16)} }

func (h *held) ServePeer(_ string, req wire.Frame, r Reply) {
	h.mu.Lock()
	h.replies = append(h.replies, r)
	h.frames = append(h.frames, wire.AppendFrame(nil, req.Type, req.Flags, 0, req.Body))
	h.mu.Unlock()
	h.arrived <- struct{}{}
}

// await waits for n more requests, within d.
func (h *held) await(t testing.TB, n int, d time.Duration) {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for range n {
		select {
		case <-h.arrived:
		case <-deadline.C:
			t.Fatalf("a request did not arrive within %v", d)
		}
	}
}

// answerAll answers every request held so far with its own frame.
func (h *held) answerAll() {
	h.mu.Lock()
	replies, frames := h.replies, h.frames
	h.replies, h.frames = nil, nil
	h.mu.Unlock()
	for i, r := range replies {
		_ = r.Answer(frames[i])
	}
}

// outcome is one async call's result.
type outcome struct {
	value []byte
	err   error
}

// asyncCall is a Call whose outcome goes to a channel.
func asyncCall(to string, req []byte, timeout time.Duration, out chan<- outcome) *Call {
	return &Call{To: to, Request: req, Timeout: timeout, Done: func(_ *Call, f wire.Frame, err error) {
		var v []byte
		if err == nil && f.Type == wire.TypePublish {
			var p wire.Publish
			if p.Decode(f, wire.Limits{FrameBytesMax: DefaultFrameBytesMax}) == nil {
				it := p.Records()
				it.Next()
				v = append([]byte(nil), it.Record().Value...)
			}
		}
		out <- outcome{value: v, err: err}
	}}
}

// receive waits for one outcome within d.
func receive(t testing.TB, ch <-chan outcome, d time.Duration) outcome {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(d):
		t.Fatalf("no outcome within %v", d)
		return outcome{}
	}
}

func within(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

// wantErr checks err is the failure kind named, with cause in its chain.
func wantErr(t testing.TB, err error, kind, cause error) {
	t.Helper()
	if !errors.Is(err, kind) || (cause != nil && !errors.Is(err, cause)) {
		t.Fatalf("err %v: want %v with %v", err, kind, cause)
	}
	if errors.Is(err, ErrNotSent) == errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("err %v is not exactly one of not-sent and outcome-unknown", err)
	}
}
