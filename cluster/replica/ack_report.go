package replica

import (
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// AckReport is one acknowledgement a Leader sent: an append (or an
// External leadership's Vouch) answered OK because the commit watermark
// passed it while the lease held. LeaderConfig.OnAck and NodeConfig.OnAck
// receive them, for a test's journal of every acknowledgement (the
// real-process nemeses, docs/reliability.md); nothing in a broker's own
// work reads them.
type AckReport struct {
	Ref         wire.LogRef // the leadership's own: valid during the call only
	Generation  uint64
	First, Last int64 // the append's offsets
	// At is the time the lease was found valid at, the ack sent right
	// after; Until is the end of that lease's window (its heartbeat's send
	// plus 3L/4, AckWindow) and Lease the L it was granted for, as the
	// lease stood at At.
	At, Until time.Time
	Lease     time.Duration
}

// leaseWindow is a lease's window as it stood at one reading.
type leaseWindow struct {
	until time.Time
	d     time.Duration
}

// validWindow is Valid, with the window it was read against.
func (l *Lease) validWindow(now time.Time, gen uint64) (bool, leaseWindow) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.validLocked(now, gen), leaseWindow{until: l.until, d: l.granted}
}

// reportAck hands OnAck the acknowledgement of p, about to be sent.
func (l *Leader) reportAck(p pendingAck, at time.Time, w leaseWindow) {
	l.cfg.OnAck(AckReport{Ref: l.cfg.Ref, Generation: uint64(l.gen), First: p.first, Last: p.last,
		At: at, Until: w.until, Lease: w.d})
}
