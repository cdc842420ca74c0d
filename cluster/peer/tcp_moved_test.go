package peer

import (
	"errors"
	"net"
	"sync"
	"testing"
	"time"
)

// A peer that registers again at another address (a restart on a new
// port) is dialled at once by the next request, without waiting out a
// backoff that was about its old address; one still at the address that
// failed is not.
func TestTCPBackoffEndsWhenThePeerMoves(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	_ = ln.Close() // nothing listens there now
	var mu sync.Mutex
	where := dead
	resolve := func(string) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		return where, nil
	}
	a := listenTest(t, Config{ID: "a", Resolve: resolve, BackoffBase: time.Hour, BackoffMax: time.Hour, jitter: func() float64 { return 0.5 }})
	ctx, cancel := within(eventWait)
	defer cancel()
	_, err = a.Call(ctx, "b", pub([]byte("v")), nil)
	wantErr(t, err, ErrNotSent, ErrUnreachable)
	_, err = a.Call(ctx, "b", pub([]byte("still there")), nil)
	wantErr(t, err, ErrNotSent, ErrUnreachable) // held back: the same address

	b := listenTest(t, Config{ID: "b", Resolve: resolve})
	b.Handle(echo)
	mu.Lock()
	where = b.Addr().String()
	mu.Unlock()
	ans, err := a.Call(ctx, "b", pub([]byte("moved")), nil)
	if err != nil || string(valueOf(t, ans)) != "moved" {
		t.Fatalf("a call after the peer moved, within an hour's backoff: %v", err)
	}
}

// Retry ends a link's backoff: the control plane saw the peer register
// again at the address that failed (it restarted on a fixed port).
func TestTCPRetryEndsTheBackoff(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	a := listenTest(t, Config{ID: "a", Resolve: func(string) (string, error) { return addr, nil },
		BackoffBase: time.Hour, BackoffMax: time.Hour, jitter: func() float64 { return 0.5 }})
	ctx, cancel := within(eventWait)
	defer cancel()
	_, err = a.Call(ctx, "b", pub([]byte("v")), nil)
	wantErr(t, err, ErrNotSent, ErrUnreachable)
	b := listenTest(t, Config{ID: "b", Addr: addr, Resolve: func(string) (string, error) { return "", errors.New("unused") }})
	b.Handle(echo)
	_, err = a.Call(ctx, "b", pub([]byte("held back")), nil)
	wantErr(t, err, ErrNotSent, ErrUnreachable)
	a.Retry("b")
	a.Retry("nobody") // no link: nothing to do
	if ans, err := a.Call(ctx, "b", pub([]byte("again")), nil); err != nil || string(valueOf(t, ans)) != "again" {
		t.Fatalf("a call after Retry: %v", err)
	}
}
