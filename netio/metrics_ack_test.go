package netio

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// ObserveAck hears once per acknowledged publish request, and not of a
// refused one.
func TestObserveAckHearsEachAcknowledgedPublish(t *testing.T) {
	var observed atomic.Int64
	m := new(Metrics)
	m.ObserveAck = func(d time.Duration) {
		if d >= 0 {
			observed.Add(1)
		}
	}
	b := startBroker(t, func(c *Config) { c.Metrics = m })
	ref := b.createStream("orders", 1)
	c := b.client(wire.FeaturesAll)
	for id := uint64(1); id <= 3; id++ {
		c.send(wire.AppendPublish(nil, id, ref, wire.AckPerBatch, wire.Record{Value: []byte("v")}))
		ackOf(t, c.read())
	}
	missing := wire.StreamRef{Tenant: []byte("acme"), Namespace: []byte("prod"), Stream: []byte("nope")}
	c.send(wire.AppendPublish(nil, 4, missing, wire.AckPerBatch, wire.Record{Value: []byte("x")}))
	c.expectError(wire.CodeNotFound, 4)
	if got := observed.Load(); got != 3 {
		t.Fatalf("ObserveAck heard %d publishes, want 3", got)
	}
}
