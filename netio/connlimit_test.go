package netio

import (
	"testing"

	"github.com/felixbroker/felix/netio/wire"
)

// With auth off (no tenant, so no connection quota) the broker still
// serves at most ConnectionsMax connections: one more is answered
// overloaded and closed before anything is allocated for it, and counted;
// a slot freed by a close is taken again.
func TestConnectionsPastTheMaximumAreRefusedWithAuthOff(t *testing.T) {
	b := startBroker(t, func(c *Config) { c.ConnectionsMax = 3 })
	m := b.s.Metrics()
	open := []*rawClient{b.client(wire.FeaturesAll), b.client(wire.FeaturesAll), b.client(wire.FeaturesAll)}
	extra := b.dial()
	extra.expectError(wire.CodeOverloaded, 0)
	extra.expectClosed()
	if m.ConnectionsRefused.Load() != 1 || m.ConnectionsActive.Load() != 3 {
		t.Fatalf("%d refused, %d active", m.ConnectionsRefused.Load(), m.ConnectionsActive.Load())
	}
	open[0].nc.Close()
	waitUntil(t, "the closed connection's slot", func() bool { return m.ConnectionsActive.Load() == 2 })
	b.client(wire.FeaturesAll).ping()
	open[1].ping()
}

// TLS connections take slots from the same maximum.
func TestTLSConnectionsCountAgainstTheMaximum(t *testing.T) {
	b, pool := startTLSBroker(t, func(c *Config) { c.ConnectionsMax = 2 })
	b.client(wire.FeaturesAll)
	b.dialTLS(pool).hello(wire.FeaturesAll, nil)
	extra := b.dialTLS(pool)
	extra.expectError(wire.CodeOverloaded, 0)
	extra.expectClosed()
	plain := b.dial()
	plain.expectError(wire.CodeOverloaded, 0)
	if n := b.s.Metrics().ConnectionsRefused.Load(); n != 2 {
		t.Fatalf("%d refused", n)
	}
}
