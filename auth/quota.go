package auth

import (
	"sync"
	"time"
)

// Limits are one tenant's quotas; zero means unlimited.
type Limits struct {
	PublishBytesPerSec int64 `toml:"publish_bytes_per_sec" json:"publish_bytes_per_sec"`
	Connections        int   `toml:"connections" json:"connections"`
	StoredBytes        int64 `toml:"stored_bytes" json:"stored_bytes"`
}

// Quotas enforces per-tenant limits. Each tenant has its own state and
// lock, so one tenant at its limit never slows another. Safe for
// concurrent use.
type Quotas struct {
	def    Limits
	per    map[string]Limits
	now    func() time.Time
	stored func(tenant string) int64

	tenants sync.Map // tenant -> *tenantQuota
}

type tenantQuota struct {
	limits Limits
	mu     sync.Mutex
	conns  int
	tokens float64 // publish bytes available; may go negative after a large publish
	last   time.Time
}

// NewQuotas applies def to every tenant not in per. stored reports a
// tenant's stored bytes (nil: stored bytes are not limited); now is the
// clock (nil: time.Now).
func NewQuotas(def Limits, per map[string]Limits, stored func(string) int64, now func() time.Time) *Quotas {
	if now == nil {
		now = time.Now
	}
	return &Quotas{def: def, per: per, now: now, stored: stored}
}

func (q *Quotas) tenant(name string) *tenantQuota {
	if t, ok := q.tenants.Load(name); ok {
		return t.(*tenantQuota)
	}
	lim, ok := q.per[name]
	if !ok {
		lim = q.def
	}
	t := &tenantQuota{limits: lim, tokens: float64(lim.PublishBytesPerSec), last: q.now()}
	actual, _ := q.tenants.LoadOrStore(name, t)
	return actual.(*tenantQuota)
}

// Connect counts a connection against the tenant's limit. Call release when
// it closes.
func (q *Quotas) Connect(tenant string) (release func(), err error) {
	t := q.tenant(tenant)
	t.mu.Lock()
	defer t.mu.Unlock()
	if max := t.limits.Connections; max > 0 && t.conns >= max {
		return nil, &QuotaError{Tenant: tenant, Limit: "connections", Max: int64(max)}
	}
	t.conns++
	var once sync.Once
	return func() {
		once.Do(func() {
			t.mu.Lock()
			t.conns--
			t.mu.Unlock()
		})
	}, nil
}

// AdmitPublish takes bytes from the tenant's publish budget: a token bucket
// refilled at the rate and holding at most one second of it. A publish
// larger than a second's budget is admitted only into a full bucket, which
// it leaves in debt. Refused publishes take nothing.
func (q *Quotas) AdmitPublish(tenant string, bytes int) error {
	t := q.tenant(tenant)
	rate := t.limits.PublishBytesPerSec
	if rate <= 0 && t.limits.StoredBytes <= 0 {
		return nil
	}
	if err := q.admitStored(tenant, t); err != nil {
		return err
	}
	if rate <= 0 {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := q.now()
	t.tokens = min(float64(rate), t.tokens+now.Sub(t.last).Seconds()*float64(rate))
	t.last = now
	full := t.tokens >= float64(rate)
	if float64(bytes) > t.tokens && !(full && bytes > int(rate)) {
		need := min(float64(bytes), float64(rate)) - t.tokens
		wait := time.Duration(need / float64(rate) * float64(time.Second))
		return &QuotaError{Tenant: tenant, Limit: "publish_bytes_per_second", Max: rate, RetryAfter: wait}
	}
	t.tokens -= float64(bytes)
	return nil
}

// AdmitStore refuses a write that keeps data (a cache put, a counter add)
// once the tenant holds its stored bytes or more; it takes nothing from the
// publish rate, which counts publishes only.
func (q *Quotas) AdmitStore(tenant string) error {
	t := q.tenant(tenant)
	if t.limits.StoredBytes <= 0 {
		return nil
	}
	return q.admitStored(tenant, t)
}

func (q *Quotas) admitStored(tenant string, t *tenantQuota) error {
	max := t.limits.StoredBytes
	if max <= 0 || q.stored == nil {
		return nil
	}
	if q.stored(tenant) >= max {
		return &QuotaError{Tenant: tenant, Limit: "stored_bytes", Max: max}
	}
	return nil
}

// Of returns the limits that apply to tenant.
func (q *Quotas) Of(tenant string) Limits { return q.tenant(tenant).limits }
