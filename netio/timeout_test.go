package netio

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// fakeClock is a clock the test moves.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time { return time.Unix(0, c.ns.Load()) }

func (c *fakeClock) advance(d time.Duration) time.Time {
	return time.Unix(0, c.ns.Add(int64(d)))
}

func TestConnectionsThatNeverSayHelloOrFallSilentAreClosed(t *testing.T) {
	clk := newFakeClock()
	b := startBroker(t, func(c *Config) {
		c.Now = clk.Now
		c.HandshakeTimeout = 5 * time.Second
		c.IdleTimeout = time.Minute
	})
	m := b.s.Metrics()
	silent := b.dial()
	waitUntil(t, "the silent connection to open", func() bool { return m.ConnectionsActive.Load() == 1 })
	active := b.client(wire.FeaturesAll)

	b.s.sweep(clk.advance(5 * time.Second))
	silent.expectError(wire.CodeHandshakeTimeout, 0)
	silent.expectClosed()
	active.ping() // it said HELLO in time

	idle := b.client(wire.FeaturesAll) // active at +5s
	b.s.sweep(clk.advance(58 * time.Second))
	active.ping() // +63s
	b.s.sweep(clk.advance(3 * time.Second))
	idle.expectError(wire.CodeIdleTimeout, 0) // silent since +5s: 61s
	idle.expectClosed()
	active.ping() // silent 3s only

	if m.HandshakesFailed.Load() != 1 || m.IdleTimeouts.Load() != 1 {
		t.Fatalf("handshake failures %d, idle timeouts %d", m.HandshakesFailed.Load(), m.IdleTimeouts.Load())
	}
}

func TestANegativeIdleTimeoutKeepsSilentConnections(t *testing.T) {
	clk := newFakeClock()
	b := startBroker(t, func(c *Config) { c.Now = clk.Now; c.IdleTimeout = -1 })
	c := b.dial()
	if ok := c.hello(wire.FeaturesAll, nil); ok.IdleTimeoutMillis != 0 {
		t.Fatalf("announced idle timeout %d", ok.IdleTimeoutMillis)
	}
	b.s.sweep(clk.advance(24 * time.Hour))
	c.ping()
}
