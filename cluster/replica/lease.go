package replica

import (
	"sync"
	"time"
)

// Lease is a broker's leadership lease on one log, as the broker counts
// it (CLUSTER.md, "Leases (rule)"): the control plane grants a lease of
// duration L in answer to a heartbeat; the broker counts it from when it
// SENT that heartbeat, on its monotonic clock, and stops acknowledging at
// 3L/4 after it. The control plane counts the same lease from when it
// received the heartbeat and promotes nobody before L has passed, so the
// two never overlap while the clocks' rates differ by less than a quarter.
//
// Times are the monotonic readings time.Now returns (Lease never calls
// it: the caller passes now). A grant from a control plane of a lower
// epoch than one already seen is refused, and a grant never shortens the
// lease. Safe for concurrent use.
type Lease struct {
	mu         sync.Mutex
	generation uint64
	epoch      int64
	until      time.Time     // zero: never granted
	granted    time.Duration // the L of the grant until was set by
	revoked    bool
}

// LeaseFraction is the share of the lease a broker acknowledges within.
const (
	leaseNumerator   = 3
	leaseDenominator = 4
)

// AckWindow is how long after its heartbeat's send a lease of d lets a
// broker acknowledge: 3d/4.
func AckWindow(d time.Duration) time.Duration { return d / leaseDenominator * leaseNumerator }

// Grant records a lease of d at generation gen from a control plane of
// epoch, answering a heartbeat sent at sent. It reports whether the grant
// was taken: one from a lower epoch than seen, or for a lower generation
// than the lease's, is not.
func (l *Lease) Grant(sent time.Time, d time.Duration, gen uint64, epoch int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if epoch < l.epoch || gen < l.generation || d <= 0 {
		return false
	}
	if gen > l.generation {
		l.until, l.revoked = time.Time{}, false
	}
	l.generation, l.epoch = gen, epoch
	if until := sent.Add(AckWindow(d)); until.After(l.until) {
		l.until, l.granted = until, d
	}
	return true
}

// Revoke ends the lease for generation gen now: its leadership was
// deposed (fenced at a later generation) or replaced. A lease already
// granted for a later generation is another leadership's, and stays.
func (l *Lease) Revoke(gen uint64) {
	l.mu.Lock()
	if gen >= l.generation {
		l.revoked = true
	}
	l.mu.Unlock()
}

// Valid reports whether the broker may acknowledge for generation gen at
// now: a lease for exactly gen, not revoked, whose window has not passed.
func (l *Lease) Valid(now time.Time, gen uint64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.validLocked(now, gen)
}

func (l *Lease) validLocked(now time.Time, gen uint64) bool {
	return !l.revoked && l.generation == gen && !l.until.IsZero() && now.Before(l.until)
}

// Until is when the current window ends (zero when never granted).
func (l *Lease) Until() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.until
}
