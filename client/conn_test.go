package client

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// The broker drops the connection on the first publish without answering:
// Publish fails with ErrConnectionLost and does not resend; the next call
// dials again and succeeds.
func TestPublishReconnectsButDoesNotResend(t *testing.T) {
	var attempts atomic.Int64
	ack := ackingHandler()
	b := newFakeBroker(t, func(fc *fakeConn, f wire.Frame) {
		if attempts.Add(1) == 1 {
			_ = fc.nc.Close()
			return
		}
		ack(fc, f)
	})
	c := dialFake(t, b)
	ctx := testCtx(t)
	_, err := c.Publish(ctx, testStream, []byte("v"))
	if !errors.Is(err, ErrConnectionLost) || !Ambiguous(err) {
		t.Fatalf("got %v, want an ambiguous lost connection", err)
	}
	if n := attempts.Load(); n != 1 {
		t.Fatalf("the broker saw %d attempts; Publish resent", n)
	}
	if _, err := c.Publish(ctx, testStream, []byte("v")); err != nil {
		t.Fatal(err)
	}
	if n, conns := attempts.Load(), c.Stats().Connections; n != 2 || conns != 2 || b.connCount() != 2 {
		t.Fatalf("%d attempts over %d connections (broker: %d)", n, conns, b.connCount())
	}
}

func TestPublishAtLeastOnceResendsOverANewConnection(t *testing.T) {
	var attempts atomic.Int64
	ack := ackingHandler()
	b := newFakeBroker(t, func(fc *fakeConn, f wire.Frame) {
		if attempts.Add(1) == 1 {
			_ = fc.nc.Close()
			return
		}
		ack(fc, f)
	})
	c := dialFake(t, b, tinyBackoff(RetryPolicy{Attempts: 3})...)
	if _, err := c.PublishAtLeastOnce(testCtx(t), testStream, []byte("v")); err != nil {
		t.Fatal(err)
	}
	if n := attempts.Load(); n != 2 || b.connCount() != 2 {
		t.Fatalf("%d attempts over %d connections, want 2 and 2", n, b.connCount())
	}
}

// Every request in flight when the connection drops fails at once, and a
// burst of callers after it shares one new dial.
func TestADroppedConnectionFailsEveryPendingRequestAndRedialsOnce(t *testing.T) {
	var seen atomic.Int64
	var mu sync.Mutex
	var first *fakeConn
	const n = 16
	ack := ackingHandler()
	b := newFakeBroker(t, func(fc *fakeConn, f wire.Frame) {
		mu.Lock()
		if first == nil {
			first = fc
		}
		isFirst := fc == first
		mu.Unlock()
		if !isFirst {
			ack(fc, f)
			return
		}
		if seen.Add(1) == n {
			_ = fc.nc.Close() // all n are pending; none was answered
		}
	})
	c := dialFake(t, b)
	ctx := testCtx(t)
	futures := make([]*PublishFuture, n)
	for i := range futures {
		futures[i] = c.PublishAsync(ctx, testStream, []byte("v"))
	}
	for _, f := range futures {
		if _, err := f.Wait(ctx); !errors.Is(err, ErrConnectionLost) {
			t.Fatalf("pending publish: %v, want connection lost", err)
		}
	}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if _, err := c.Publish(ctx, testStream, []byte("v")); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if b.connCount() != 2 || c.Stats().Connections != 2 {
		t.Fatalf("%d connections after the drop, want 2", b.connCount())
	}
}

// A caller that gives up waiting gets its context's error; the answer that
// comes later is dropped and frees its slot, and the client carries on.
func TestContextCancellationAbandonsTheWaitNotTheClient(t *testing.T) {
	held := make(chan uint64, 1)
	var conn atomic.Pointer[fakeConn]
	ack := ackingHandler()
	var n atomic.Int64
	b := newFakeBroker(t, func(fc *fakeConn, f wire.Frame) {
		conn.Store(fc)
		if n.Add(1) == 1 {
			held <- f.RequestID // answered later, by the test
			return
		}
		ack(fc, f)
	})
	c := dialFake(t, b)
	ctx := testCtx(t)
	short, cancel := context.WithCancel(ctx)
	go func() {
		<-held
		cancel()
	}()
	_, err := c.Publish(short, testStream, []byte("v"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	conn.Load().ack(1, wire.AckRun{Count: 1}) // the late answer (request ids start at 1)
	if _, err := c.Publish(ctx, testStream, []byte("v")); err != nil {
		t.Fatal(err)
	}
	// The second answer came after the late one on the same connection, so
	// the late one was handled: its slot is free.
	if got := c.Stats().Inflight; got != 0 {
		t.Fatalf("%d slots still taken", got)
	}
	if c.Stats().Connections != 1 {
		t.Fatal("cancelling a wait cost the connection")
	}
}

func TestTheClientAnswersTheBrokersPing(t *testing.T) {
	b := newFakeBroker(t, ackingHandler())
	seen := b.watch(16)
	c := dialFake(t, b)
	if _, err := c.Session(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	fc := b.conns[0]
	b.mu.Unlock()
	fc.sendWith(func(dst []byte) []byte { return wire.AppendPing(dst, 99, 12345) })
	f := next(t, seen)
	var p wire.Ping
	if err := p.Decode(f, wire.Limits{}); err != nil || f.Type != wire.TypePong || f.RequestID != 99 || p.Payload != 12345 {
		t.Fatalf("answered %v id %d payload %d (%v), want PONG 99 12345", f.Type, f.RequestID, p.Payload, err)
	}
}

// An idle client pings; a broker that sends nothing for two intervals is
// taken for lost, and the next request dials again.
func TestASilentBrokerIsDetectedByThePings(t *testing.T) {
	b := newFakeBroker(t, nil)
	ack := ackingHandler()
	b.handle = func(fc *fakeConn, f wire.Frame) {
		if !b.mute.Load() {
			ack(fc, f)
		}
	}
	seen := b.watch(1024)
	c := dialFake(t, b, WithPingInterval(20*time.Millisecond))
	ctx := testCtx(t)
	if f := next(t, seen); f.Type != wire.TypePing {
		t.Fatalf("an idle client sent %v, want PING", f.Type)
	}
	b.mute.Store(true)
	_, err := c.PublishAsync(ctx, testStream, []byte("v")).Wait(ctx)
	if !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("publish to a silent broker: %v, want connection lost", err)
	}
	b.mute.Store(false)
	if _, err := c.Publish(ctx, testStream, []byte("v")); err != nil {
		t.Fatal(err)
	}
	if c.Stats().Connections != 2 {
		t.Fatalf("%d connections, want a redial", c.Stats().Connections)
	}
}

// Closing the client while many goroutines publish and read ends every
// call promptly, each with its answer or ErrClosed, and nothing leaks a
// slot or races.
func TestCloseWhileBusyEndsEveryCallCleanly(t *testing.T) {
	b, _ := subscribeBroker(t, 0)
	c := dialFake(t, b)
	ctx := testCtx(t)
	sub, err := c.Subscribe(ctx, testStream, 0, SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fc := brokerConn(b)
	var wg sync.WaitGroup
	started := make(chan struct{}, 8)
	for range 8 {
		wg.Go(func() {
			started <- struct{}{}
			for {
				f := c.PublishAsync(ctx, testStream, []byte("v"))
				_, err := f.Wait(ctx)
				if errors.Is(err, ErrClosed) {
					return
				}
				if err != nil {
					t.Errorf("publish while closing: %v", err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := uint64(0); ; i++ {
			pushEvents(fc, i)
			if _, err := sub.Next(ctx); err != nil {
				if !errors.Is(err, ErrClosed) {
					t.Errorf("subscription ended with %v, want ErrClosed", err)
				}
				return
			}
		}
	})
	for range 8 {
		<-started
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
}
