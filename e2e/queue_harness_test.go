package e2e

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	fbroker "github.com/felixbroker/felix/broker"
	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/group"
	"github.com/felixbroker/felix/netio"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment/vfs"
)

// queueBroker is a broker.Broker serving consumer groups and idempotent
// producers, in-process, on a memory file system. It restarts on the same
// files and the same address, so a client reconnects to it as to a real
// broker that came back.
type queueBroker struct {
	t     testing.TB
	eopts engine.Options
	gopts group.Options
	addr  string // fixed after the first start

	b      *fbroker.Broker
	eng    *engine.Engine // b's, for tests that look inside
	groups *group.Manager // b's
	srv    *netio.Server  // b's
}

// startQueueBroker starts a broker on a fresh memory file system; eopts'
// FS and Dir are set here.
func startQueueBroker(t testing.TB, eopts engine.Options, gopts group.Options) *queueBroker {
	t.Helper()
	eopts.FS, eopts.Dir = vfs.NewMem(), "/data"
	b := &queueBroker{t: t, eopts: eopts, gopts: gopts, addr: "127.0.0.1:0"}
	b.start()
	t.Cleanup(b.stop)
	return b
}

func (b *queueBroker) start() {
	b.t.Helper()
	fb, err := fbroker.Start(fbroker.Config{DataDir: b.eopts.Dir, FS: b.eopts.FS, Engine: b.eopts, Groups: b.gopts,
		Net: netio.Config{Addr: b.addr, Multicore: true, EventLoops: 2}})
	if err != nil {
		b.t.Fatal(err)
	}
	b.b, b.eng, b.groups, b.srv, b.addr = fb, fb.Engine(), fb.Groups(), fb.Server(), fb.Addr().String()
}

// stop stops the broker; twice is harmless.
func (b *queueBroker) stop() {
	if b.b == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.b.Stop(ctx); err != nil {
		b.t.Errorf("stopping the broker: %v", err)
	}
	b.b, b.srv, b.eng, b.groups = nil, nil, nil, nil
}

// restart stops the broker and starts it again on the same files and
// address: what it held in memory (claims, producers) is gone.
func (b *queueBroker) restart() {
	b.t.Helper()
	b.stop()
	b.start()
}

func (b *queueBroker) dial(t testing.TB, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.Dial(testCtx(t), b.addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// fakeClock is the groups' clock, moved by the test: claims lapse and nack
// delays end when it passes them, never on their own.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers map[*fakeTimer]struct{}
	made   chan struct{} // a token per timer made: a poll went to sleep
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Unix(1_700_000_000, 0), timers: map[*fakeTimer]struct{}{}, made: make(chan struct{}, 1<<16)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) group.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), ch: make(chan time.Time, 1)}
	if d <= 0 {
		t.ch <- c.now
	} else {
		c.timers[t] = struct{}{}
	}
	c.made <- struct{}{}
	return t
}

// advance moves the clock and fires every timer it passes.
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	for t := range c.timers {
		if !t.at.After(c.now) {
			t.ch <- c.now
			delete(c.timers, t)
		}
	}
}

// waitSleeper waits until some poll has gone to sleep since the last call.
func (c *fakeClock) waitSleeper(t testing.TB) {
	t.Helper()
	select {
	case <-c.made:
	case <-time.After(20 * time.Second):
		t.Fatal("no poll went to sleep")
	}
}

type fakeTimer struct {
	c  *fakeClock
	at time.Time
	ch chan time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	_, ok := t.c.timers[t]
	delete(t.c.timers, t)
	return ok
}

// switchOwner is an Ownership the test hands to another broker and back.
type switchOwner struct{ remote atomic.Bool }

func (o *switchOwner) Leader(engine.StreamID, int) (bool, string) {
	if o.remote.Load() {
		return false, "10.0.0.9:7117"
	}
	return true, ""
}

// ackDropper wraps the connections a client dials. Armed, the first
// connection to send a PUBLISH_IDEMPOTENT stops delivering what the broker
// sends back (the acknowledgement is lost) and reports the send; kill then
// ends that connection, as a network failure would. Later connections pass
// everything.
type ackDropper struct {
	armed atomic.Bool
	sent  chan struct{}

	mu   sync.Mutex
	deaf *droppingConn
}

func newAckDropper() *ackDropper { return &ackDropper{sent: make(chan struct{}, 1)} }

func (d *ackDropper) option() client.Option {
	return client.WithDialer(func(ctx context.Context, addr string) (net.Conn, error) {
		var nd net.Dialer
		nc, err := nd.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		return &droppingConn{Conn: nc, d: d}, nil
	})
}

// kill closes the connection that went deaf.
func (d *ackDropper) kill(t testing.TB) {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.deaf == nil {
		t.Fatal("no connection went deaf")
	}
	_ = d.deaf.Conn.Close()
}

type droppingConn struct {
	net.Conn
	d    *ackDropper
	deaf atomic.Bool
	out  []byte // written, not yet parsed into frames
}

func (c *droppingConn) Write(p []byte) (int, error) {
	if c.d.armed.Load() && !c.deaf.Load() && c.sendsIdempotent(p) && c.d.armed.CompareAndSwap(true, false) {
		c.deaf.Store(true) // before the bytes leave: the answer cannot slip through
		c.d.mu.Lock()
		c.d.deaf = c
		c.d.mu.Unlock()
		n, err := c.Conn.Write(p)
		c.d.sent <- struct{}{}
		return n, err
	}
	return c.Conn.Write(p)
}

// sendsIdempotent reports whether the bytes written so far complete a
// PUBLISH_IDEMPOTENT frame.
func (c *droppingConn) sendsIdempotent(p []byte) bool {
	c.out = append(c.out, p...)
	var r wire.Reader
	found := false
	for len(c.out) > 0 {
		f, need, err := r.Next(c.out)
		if err != nil || need > 0 {
			break
		}
		found = found || f.Type == wire.TypePublishIdempotent
		c.out = c.out[f.Size():]
	}
	return found
}

func (c *droppingConn) Read(p []byte) (int, error) {
	for {
		n, err := c.Conn.Read(p)
		if !c.deaf.Load() || err != nil {
			if err != nil && c.deaf.Load() {
				return 0, errors.Join(err, errDeaf)
			}
			return n, err
		}
	}
}

var errDeaf = errors.New("e2e: the connection was made deaf by the test")
