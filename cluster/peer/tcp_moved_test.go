package peer

import (
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
