package netio

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
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

// Measuring ack latency adds no allocation to a publish.
func TestPublishWithAckObserverAllocatesNothing(t *testing.T) {
	e, err := engine.Open(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var acks atomic.Int64
	m := new(Metrics)
	m.ObserveAck = func(time.Duration) { acks.Add(1) }
	s, err := NewServer(Config{Engine: e, BrokerID: "b1", Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	id := engine.StreamID{Tenant: "acme", Namespace: "prod", Name: "hot"}
	if _, err := e.CreateStream(id, engine.StreamConfig{}); err != nil {
		t.Fatal(err)
	}
	fc := &loopConn{}
	c := newConn(s, fc)
	fc.in = wire.AppendHello(nil, 1, wire.Hello{VersionMin: 1, VersionMax: 1, Features: wire.FeaturesAll})
	c.traffic()
	frame := wire.AppendPublish(nil, 2, wireRef(id), wire.AckPerBatch, wire.Record{Value: make([]byte, 1024)})
	publish := func() {
		fc.in = frame
		c.traffic()
		fc.out = fc.out[:0]
	}
	for range 100 {
		publish()
	}
	if acks.Load() != 100 {
		t.Fatalf("observed %d acks of 100", acks.Load())
	}
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	if a := testing.AllocsPerRun(500, publish); a > 0 {
		t.Errorf("%.2f allocations per publish with ack latency measured", a)
	}
}
