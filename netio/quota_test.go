package netio

import (
	"testing"
	"time"

	"github.com/felixbroker/felix/auth"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio/wire"
)

// The connection quota is taken at HELLO from the token's tenant and given
// back at close; another tenant's connections are not counted against it.
func TestAConnectionQuotaIsCountedAtHelloPerTenant(t *testing.T) {
	clock := newFakeClock()
	sg := newSigner(t, clock)
	q := auth.NewQuotas(auth.Limits{}, map[string]auth.Limits{"acme": {Connections: 1}}, nil, clock.Now)
	b := startAuthBroker(t, clock, sg, func(c *Config) { c.Quotas = q })
	acme, globex := sg.token("acme", time.Hour, "*:*"), sg.token("globex", time.Hour, "*:*")

	first := b.dial()
	first.hello(wire.FeaturesAll, acme)
	second := b.dial()
	second.send(wire.AppendHello(nil, 1, wire.Hello{VersionMin: 1, VersionMax: 1, Token: acme}))
	e := second.expectError(wire.CodeQuotaExceeded, 1)
	if e.Details.Quota != "connections" || e.Details.LimitValue != 1 {
		t.Fatalf("details %+v", e.Details)
	}
	second.expectClosed()
	for range 3 {
		b.dial().hello(wire.FeaturesAll, globex)
	}
	if n := b.s.AuthMetrics().QuotaConnections.Load(); n != 1 {
		t.Fatalf("QuotaConnections = %d", n)
	}
	first.nc.Close()
	waitUntil(t, "the first connection's slot to come back", func() bool {
		c := b.dial()
		c.send(wire.AppendHello(nil, 1, wire.Hello{VersionMin: 1, VersionMax: 1, Token: acme}))
		return c.read().Type == wire.TypeHelloOK
	})
}

// A publish over the tenant's rate is refused with quota_exceeded naming
// the quota and when it would fit; the record does not land, and another
// tenant keeps publishing.
func TestAPublishOverTheRateIsRefusedNamingTheQuota(t *testing.T) {
	clock := newFakeClock()
	q := auth.NewQuotas(auth.Limits{}, map[string]auth.Limits{"acme": {PublishBytesPerSec: 1000}}, nil, clock.Now)
	b := startBroker(t, func(c *Config) { c.Quotas = q })
	ref := b.createStream("orders", 1)
	other := b.createStreamOf("globex", "orders")
	c := b.client(wire.FeaturesAll)

	c.send(wire.AppendPublish(nil, 1, ref, wire.AckPerBatch, wire.Record{Key: []byte("k"), Value: make([]byte, 799)}))
	ackOf(t, c.read())
	c.send(wire.AppendPublish(nil, 2, ref, wire.AckPerBatch, wire.Record{Value: make([]byte, 300)}))
	e := c.expectError(wire.CodeQuotaExceeded, 2)
	if e.Details.Quota != "publish_bytes_per_second" || e.Details.LimitValue != 1000 || e.Details.RetryAfterMillis != 100 {
		t.Fatalf("details %+v", e.Details)
	}
	for i := range 10 {
		c.send(wire.AppendPublish(nil, uint64(10+i), other, wire.AckPerBatch, wire.Record{Value: make([]byte, 64<<10)}))
		ackOf(t, c.read())
	}
	if sh, _ := mustStream(t, b, ref).Shard(0); sh.End() != 1 {
		t.Fatalf("%d records landed, want 1", sh.End())
	}
	clock.advance(100 * time.Millisecond)
	c.send(wire.AppendPublish(nil, 3, ref, wire.AckPerBatch, wire.Record{Value: make([]byte, 300)}))
	ackOf(t, c.read())
}

// The quota asks nothing of the heap on the publish path.
func TestAdmittingAPublishAllocatesNothing(t *testing.T) {
	q := auth.NewQuotas(auth.Limits{PublishBytesPerSec: 1 << 40}, nil, func(string) int64 { return 0 }, nil)
	b := startBroker(t, func(c *Config) { c.Quotas = q })
	c := &conn{s: b.s}
	recs := []engine.Record{{Key: []byte("k"), Value: make([]byte, 100)}}
	tenant := string([]byte("acme"))
	if n := testing.AllocsPerRun(200, func() { _ = c.admitPublish(tenant, recs) }); n != 0 {
		t.Fatalf("admitPublish allocated %v times", n)
	}
}

// A tenant's stored bytes are read from its own streams' logs, and at most
// once per interval.
func TestStoredBytesAreTheTenantsAndRefreshedOncePerInterval(t *testing.T) {
	clock := newFakeClock()
	e, err := engine.Open(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	acme := mustCreate(t, e, "acme", "orders")
	mustCreate(t, e, "globex", "orders")
	sb := NewStoredBytes(e, time.Second, clock.Now)
	if n := sb.Of("acme"); n != 0 {
		t.Fatalf("empty: %d", n)
	}
	w := make(chanWaiter, 1)
	if err := acme.Publish([]engine.Record{{Value: make([]byte, 1000)}}, w); err != nil {
		t.Fatal(err)
	}
	if err := <-w; err != nil {
		t.Fatal(err)
	}
	if n := sb.Of("acme"); n != 0 {
		t.Fatalf("recomputed within the interval: %d", n)
	}
	clock.advance(time.Second)
	if n := sb.Of("acme"); n < 1000 {
		t.Fatalf("after the interval: %d, want at least the record", n)
	}
	if n := sb.Of("globex"); n != 0 {
		t.Fatalf("another tenant's bytes counted: %d", n)
	}
}

func mustCreate(t *testing.T, e *engine.Engine, tenant, name string) *engine.Stream {
	t.Helper()
	id := engine.StreamID{Tenant: tenant, Namespace: "prod", Name: name}
	if _, err := e.CreateStream(id, engine.StreamConfig{Shards: 1}); err != nil {
		t.Fatal(err)
	}
	st, err := e.Stream(id)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// createStreamOf makes a one-shard stream of another tenant.
func (b *testBroker) createStreamOf(tenant, name string) wire.StreamRef {
	b.t.Helper()
	return wireRef(mustCreate(b.t, b.e, tenant, name).ID())
}

// chanWaiter hands a publish's outcome to a channel.
type chanWaiter chan error

func (w chanWaiter) Published(_ []engine.AckRun, err error) { w <- err }
