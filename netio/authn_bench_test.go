package netio

import (
	"testing"
	"time"

	"github.com/felixbroker/felix/auth"
	"github.com/felixbroker/felix/engine"
)

// BenchmarkAuthorizePublish is what auth on adds to every publish: the
// permission check of a token with a few permissions, then the tenant's
// quotas (a publish rate), beside the check of a broker with auth off.
func BenchmarkAuthorizePublish(b *testing.B) {
	clock := newFakeClock()
	sg := newSigner(b, clock)
	tok := sg.token("acme", time.Hour, "subscribe:*", "cache.read:*", "publish:billing/*", "publish:orders/*")
	p := principalFor(b, authenticator(b, clock, sg.public()), tok)
	res := Resource{Tenant: "acme", Namespace: "orders", Stream: "created"}
	q := auth.NewQuotas(auth.Limits{PublishBytesPerSec: 1 << 50}, nil, nil, nil)
	c := &conn{s: &Server{cfg: Config{Quotas: q}}}
	recs := []engine.Record{{Value: make([]byte, 1024)}}
	b.Run("off", func(b *testing.B) {
		b.ReportAllocs()
		var off Principal = AllowAll{}
		for range b.N {
			_ = off.Allow(ActionPublish, res)
		}
	})
	b.Run("permission", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_ = p.Allow(ActionPublish, res)
		}
	})
	b.Run("permission+quota", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_ = p.Allow(ActionPublish, res)
			_ = c.admitPublish(res.Tenant, recs)
		}
	})
}
