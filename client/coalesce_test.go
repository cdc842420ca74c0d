package client

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// gatedConn counts writes; once armed, the second write waits at the gate
// until it is opened, and says so on waiting.
type gatedConn struct {
	net.Conn
	armed   atomic.Bool
	writes  atomic.Int32 // since armed
	waiting chan struct{}
	gate    chan struct{}
	once    sync.Once
}

func (g *gatedConn) Write(b []byte) (int, error) {
	if g.armed.Load() && g.writes.Add(1) == 2 {
		g.once.Do(func() { close(g.waiting) })
		<-g.gate
	}
	return g.Conn.Write(b)
}

// Asynchronous publishes sent while earlier ones await their acks do not
// write one by one on the caller: they gather behind the write under way
// and leave together (here 100 publishes in at most 3 writes), and none
// waits for another's write.
func TestAsyncPublishesGatherIntoOneWrite(t *testing.T) {
	const n = 100
	var mu sync.Mutex
	var held []uint64
	b := newFakeBroker(t, func(fc *fakeConn, f wire.Frame) {
		if f.Type != wire.TypePublish {
			return
		}
		mu.Lock()
		held = append(held, f.RequestID)
		all := len(held) == n
		mu.Unlock()
		if all {
			for i, id := range held {
				fc.ack(id, wire.AckRun{FirstOffset: uint64(i), Count: 1})
			}
		}
	})
	gc := &gatedConn{waiting: make(chan struct{}), gate: make(chan struct{})}
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		var d net.Dialer
		nc, err := d.DialContext(ctx, "tcp", addr)
		gc.Conn = nc
		return gc, err
	}
	c := dialFake(t, b, WithDialer(dial), WithPingInterval(0))
	ctx := testCtx(t)
	gc.armed.Store(true)
	futures := make([]*PublishFuture, n)
	issued := make(chan struct{})
	go func() {
		for i := range futures {
			futures[i] = c.PublishAsync(ctx, testStream, []byte("v"))
		}
		close(issued)
	}()
	<-gc.waiting
	select {
	case <-issued:
	case <-time.After(10 * time.Second):
		close(gc.gate)
		t.Fatal("a publish waited for the write of an earlier one")
	}
	close(gc.gate)
	for i, f := range futures {
		if _, err := f.Wait(ctx); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
	}
	if w := gc.writes.Load(); w > 3 {
		t.Fatalf("%d publishes took %d writes", n, w)
	}
}
