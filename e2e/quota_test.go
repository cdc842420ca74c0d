package e2e

import (
	"testing"
	"time"

	"github.com/felixbroker/felix/auth"
	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/netio"
)

// One tenant over its publish rate is refused with quota_exceeded naming
// the quota, while another tenant publishes its whole rate in the same
// second: tenants' buckets are their own.
func TestOneTenantOverItsPublishRateLeavesAnotherAtItsRate(t *testing.T) {
	c := newClock()
	k := newKey(t, c)
	const rate = 64 << 10
	q := auth.NewQuotas(auth.Limits{PublishBytesPerSec: rate}, nil, nil, c.Now)
	b := startSecured(t, c, func(cfg *netio.Config) { cfg.Quotas = q }, k)
	acme := b.mustDialOn(t, "tcp", k.token("acme", "*:*"))
	globex := b.mustDialOn(t, "tls", k.token("globex", "*:*"))
	sa, sg := testStream(t, "rate"), client.Stream{Tenant: "globex", Namespace: "rate", Name: "s"}
	for _, p := range []struct {
		c *client.Client
		s client.Stream
	}{{acme, sa}, {globex, sg}} {
		if _, err := p.c.CreateStream(testCtx(t), p.s, client.StreamConfig{Shards: 1}); err != nil {
			t.Fatal(err)
		}
	}
	value := make([]byte, 4<<10)
	sent := 0
	var refusal error
	for refusal == nil {
		if _, refusal = acme.Publish(testCtx(t), sa, value); refusal == nil {
			sent += len(value)
		}
	}
	wantCode(t, "acme over its rate", refusal, client.ErrQuotaExceeded)
	se := serverError(t, refusal)
	if se.Details.Quota != "publish_bytes_per_second" || se.Details.LimitValue != rate || se.Details.RetryAfterMillis == 0 {
		t.Fatalf("details %+v", se.Details)
	}
	if sent != rate {
		t.Fatalf("acme published %d bytes before the refusal, want its rate %d", sent, rate)
	}
	for i := 0; i < rate/len(value); i++ { // globex's whole rate, in the same second of the clock
		if _, err := globex.Publish(testCtx(t), sg, value); err != nil {
			t.Fatalf("globex refused after %d publishes: %v", i, err)
		}
	}
	c.advance(time.Duration(se.Details.RetryAfterMillis) * time.Millisecond)
	if _, err := acme.Publish(testCtx(t), sa, value); err != nil {
		t.Fatalf("acme after the wait it was told: %v", err)
	}
}

// A tenant at its connection quota is refused its next connection at
// HELLO; another tenant connects; a connection closing gives its slot
// back.
func TestAConnectionQuotaRefusesTheConnectionOverIt(t *testing.T) {
	c := newClock()
	k := newKey(t, c)
	q := observedQuotas{auth.NewQuotas(auth.Limits{}, map[string]auth.Limits{"acme": {Connections: 2}}, nil, c.Now), make(chan string, 16)}
	b := startSecured(t, c, func(cfg *netio.Config) { cfg.Quotas = q }, k)
	tok := k.token("acme", "*:*")
	first := b.mustDialOn(t, "tcp", tok)
	b.mustDialOn(t, "tls", tok)
	_, err := b.dialOn(t, "tcp", tok)
	wantCode(t, "a third connection", err, client.ErrQuotaExceeded)
	if se := serverError(t, err); se.Details.Quota != "connections" || se.Details.LimitValue != 2 {
		t.Fatalf("details %+v", se.Details)
	}
	for range 3 {
		b.mustDialOn(t, "tcp", k.token("globex", "*:*"))
	}
	first.Close()
	select {
	case tenant := <-q.released:
		if tenant != "acme" {
			t.Fatalf("released a slot of %q", tenant)
		}
	case <-testCtx(t).Done():
		t.Fatal("the closed connection's slot never came back")
	}
	b.mustDialOn(t, "tcp", tok)
}

// observedQuotas says on released which tenant got a connection slot
// back.
type observedQuotas struct {
	*auth.Quotas
	released chan string
}

func (q observedQuotas) Connect(tenant string) (func(), error) {
	release, err := q.Quotas.Connect(tenant)
	if err != nil {
		return nil, err
	}
	return func() {
		release()
		q.released <- tenant
	}, nil
}

// A tenant over its stored bytes is refused further publishes, naming the
// quota; another tenant is not; deleting its data lets it publish again.
func TestAStoredBytesQuotaRefusesPublishesOverIt(t *testing.T) {
	c := newClock()
	k := newKey(t, c)
	var stored *netio.StoredBytes
	b := startSecured(t, c, func(cfg *netio.Config) {
		stored = netio.NewStoredBytes(cfg.Engine, time.Second, c.Now)
		cfg.Quotas = auth.NewQuotas(auth.Limits{StoredBytes: 16 << 10}, nil, stored.Of, c.Now)
	}, k)
	acme := b.mustDialOn(t, "tcp", k.token("acme", "*:*"))
	globex := b.mustDialOn(t, "tcp", k.token("globex", "*:*"))
	sa, sg := testStream(t, "stored"), client.Stream{Tenant: "globex", Namespace: "stored", Name: "s"}
	for _, p := range []struct {
		c *client.Client
		s client.Stream
	}{{acme, sa}, {globex, sg}} {
		if _, err := p.c.CreateStream(testCtx(t), p.s, client.StreamConfig{Shards: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := acme.Publish(testCtx(t), sa, make([]byte, 32<<10)); err != nil {
		t.Fatal(err)
	}
	c.advance(time.Second) // the stored figure is refreshed once a second
	_, err := acme.Publish(testCtx(t), sa, []byte("one more"))
	wantCode(t, "over stored bytes", err, client.ErrQuotaExceeded)
	if se := serverError(t, err); se.Details.Quota != "stored_bytes" {
		t.Fatalf("details %+v", se.Details)
	}
	if _, err := globex.Publish(testCtx(t), sg, make([]byte, 8<<10)); err != nil {
		t.Fatalf("globex: %v", err)
	}
	if err := acme.DeleteStream(testCtx(t), sa); err != nil {
		t.Fatal(err)
	}
	c.advance(time.Second)
	if _, err := acme.CreateStream(testCtx(t), sa, client.StreamConfig{Shards: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := acme.Publish(testCtx(t), sa, []byte("room again")); err != nil {
		t.Fatalf("after deleting its data: %v", err)
	}
}
