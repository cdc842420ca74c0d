package netio

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/auth"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/cache"
	"github.com/felixbroker/felix/engine/group"
	"github.com/felixbroker/felix/netio/wire"
)

// Quotas limits what each tenant may use; *auth.Quotas is the one the
// broker runs. Safe for concurrent use; both methods run on event loops
// and must not block.
//
// A connection is counted at HELLO against its token's tenant, so the
// connection quota applies only with an Authenticator (with auth off no
// connection has a tenant). Publishes count against the stream's tenant,
// with auth on or off.
type Quotas interface {
	// Connect takes a connection slot from tenant; release gives it back.
	Connect(tenant string) (release func(), err error)
	// AdmitPublish takes bytes from the tenant's publish rate, or refuses
	// (also when the tenant is over its stored bytes).
	AdmitPublish(tenant string, bytes int) error
	// AdmitStore refuses a cache put or a counter add while the tenant is
	// over its stored bytes.
	AdmitStore(tenant string) error
}

// admitStore asks the quotas whether tenant may keep more data (a cache
// put, a counter add). Loop only; allocates nothing unless it refuses.
func (c *conn) admitStore(tenant string) *wire.Error {
	q := c.s.cfg.Quotas
	if q == nil {
		return nil
	}
	if err := q.AdmitStore(tenant); err != nil {
		return c.s.quotaRefusal(err)
	}
	return nil
}

// admitPublish asks the quotas for a publish's bytes (its records' keys
// and values) on the stream's tenant. Loop only; allocates nothing unless
// it refuses.
func (c *conn) admitPublish(tenant string, recs []engine.Record) *wire.Error {
	q := c.s.cfg.Quotas
	if q == nil {
		return nil
	}
	n := 0
	for i := range recs {
		n += len(recs[i].Key) + len(recs[i].Value)
	}
	if err := q.AdmitPublish(tenant, n); err != nil {
		return c.s.quotaRefusal(err)
	}
	return nil
}

// quotaRefusal is ERROR quota_exceeded naming the quota (details.quota:
// publish_bytes_per_second, connections or stored_bytes), its value
// (details.limit_value) and, for the rate, when the request would fit
// (details.retry_after_ms).
func (s *Server) quotaRefusal(err error) *wire.Error {
	var qe *auth.QuotaError
	if !errors.As(err, &qe) {
		return refusal(err, wire.CodeQuotaExceeded)
	}
	m := &s.authn.metrics
	switch qe.Limit {
	case "connections":
		m.QuotaConnections.Add(1)
	case "stored_bytes":
		m.QuotaStoredBytes.Add(1)
	default:
		m.QuotaPublishRate.Add(1)
	}
	return &wire.Error{Code: wire.CodeQuotaExceeded, Message: qe.Error(), Details: wire.Details{
		Quota: qe.Limit, LimitValue: uint64(max(qe.Max, 0)), RetryAfterMillis: retryAfterMillis(qe.RetryAfter)}}
}

// retryAfterMillis rounds up, so a client that waits what it is told is
// not refused again for a fraction of a millisecond.
func retryAfterMillis(d time.Duration) uint32 {
	if d <= 0 {
		return 0
	}
	return uint32(min((d+time.Millisecond-1)/time.Millisecond, 1<<32-1))
}

// StoredBytes tells auth.Quotas what each tenant stores: the sum of its
// streams' shard logs (engine.Engine.TenantBytes), once Caches names the
// broker's cache store its caches' and counters' logs
// (cache.Store.TenantBytes), and once Groups names the group manager its
// consumer groups' cursor and dead-letter logs (group.Manager.TenantBytes),
// recomputed at most once
// per interval for each tenant, so a publish never walks the streams. The
// stored-bytes quota can therefore be overshot by what a tenant publishes
// within one interval. Of is safe for concurrent use; the recomputation
// runs on the event loop that finds the figure stale (the others keep
// using the old one meanwhile).
type StoredBytes struct {
	e       *engine.Engine
	caches  *cache.Store   // nil: caches are not counted
	groups  *group.Manager // nil: consumer groups are not counted
	every   time.Duration
	now     func() time.Time
	tenants sync.Map // tenant -> *storedFigure
}

type storedFigure struct {
	refresh sync.Mutex // held by the one recomputing
	bytes   atomic.Int64
	at      atomic.Int64 // unix ns of the last recomputation; 0: never
}

// DefaultStoredBytesInterval is how stale a tenant's stored bytes may be.
const DefaultStoredBytesInterval = time.Second

// NewStoredBytes reads e's stored bytes, recomputing each tenant's figure
// once it is older than every (default DefaultStoredBytesInterval); now is
// the clock (default time.Now).
func NewStoredBytes(e *engine.Engine, every time.Duration, now func() time.Time) *StoredBytes {
	if every <= 0 {
		every = DefaultStoredBytesInterval
	}
	if now == nil {
		now = time.Now
	}
	return &StoredBytes{e: e, every: every, now: now}
}

// Caches counts the caches of st too; call it before the first Of.
func (s *StoredBytes) Caches(st *cache.Store) *StoredBytes {
	s.caches = st
	return s
}

// Groups counts the consumer groups of m too; call it before the first Of.
func (s *StoredBytes) Groups(m *group.Manager) *StoredBytes {
	s.groups = m
	return s
}

// Of is tenant's stored bytes, at most one interval old.
func (s *StoredBytes) Of(tenant string) int64 {
	v, ok := s.tenants.Load(tenant)
	if !ok {
		v, _ = s.tenants.LoadOrStore(tenant, new(storedFigure))
	}
	f := v.(*storedFigure)
	now := s.now().UnixNano()
	if at := f.at.Load(); at != 0 && now-at < int64(s.every) {
		return f.bytes.Load()
	}
	if f.refresh.TryLock() {
		f.bytes.Store(s.compute(tenant))
		f.at.Store(now)
		f.refresh.Unlock()
	}
	return f.bytes.Load()
}

// compute walks tenant's streams, caches and groups.
func (s *StoredBytes) compute(tenant string) int64 {
	n := s.e.TenantBytes(tenant)
	if s.caches != nil {
		n += s.caches.TenantBytes(tenant)
	}
	if s.groups != nil {
		n += s.groups.TenantBytes(tenant)
	}
	return n
}
