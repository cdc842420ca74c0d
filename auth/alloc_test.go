package auth

import (
	"errors"
	"testing"
	"time"
)

// Allow runs for every publish on a broker's event loop: it must not
// allocate, however long the names.
func TestAllowAllocatesNothing(t *testing.T) {
	priv, pub := keyPair(t)
	now := t0
	p, err := verifier(t, &now, pub).Verify(issue(t, priv, "acme", "subscribe:*", "publish:orders-and-more-orders/*"))
	if err != nil {
		t.Fatal(err)
	}
	ns, name := "orders-and-more-orders", "created-events-with-a-long-stream-name"
	if err := p.Allow(ActionPublish, "acme", ns, name); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(200, func() { _ = p.Allow(ActionPublish, "acme", ns, name) }); n != 0 {
		t.Fatalf("Allow allocated %v times per call", n)
	}
}

// The path matcher sees exactly what matching the joined string would.
func TestPathMatchingAgreesWithTheJoinedString(t *testing.T) {
	patterns := []string{"*", "*/*", "orders/*", "ord*", "*/created", "o*s/c*d", "orders/created", "orders/", "orders", "*s/*", "/*", "**", "orders/*d"}
	paths := [][2]string{{"orders", "created"}, {"orders", ""}, {"", "x"}, {"ordersx", "y"}, {"o", "c"}, {"orders", "create"}, {"a", "b/c"}}
	for _, pat := range patterns {
		for _, pa := range paths {
			want := match(pat, pa[0]+"/"+pa[1])
			if got := glob(pat, resourcePath{pa[0], pa[1]}); got != want {
				t.Errorf("glob(%q, %q/%q) = %v, joined says %v", pat, pa[0], pa[1], got, want)
			}
		}
	}
}

// A publish refused by the rate says when it would fit.
func TestAPublishOverTheRateSaysWhenItWouldFit(t *testing.T) {
	now := t0
	q := NewQuotas(Limits{PublishBytesPerSec: 1000}, nil, nil, func() time.Time { return now })
	if err := q.AdmitPublish("acme", 1000); err != nil {
		t.Fatal(err)
	}
	var qe *QuotaError
	if err := q.AdmitPublish("acme", 250); !errors.As(err, &qe) {
		t.Fatalf("over the rate: %v", err)
	}
	if qe.RetryAfter != 250*time.Millisecond {
		t.Fatalf("retry after %v; want 250ms", qe.RetryAfter)
	}
	now = now.Add(qe.RetryAfter)
	if err := q.AdmitPublish("acme", 250); err != nil {
		t.Fatalf("after the wait it named: %v", err)
	}
}
