package group

import "sync/atomic"

type counters struct {
	polls, delivered, redelivered, acked, nacked, lapsed, deadLettered, redriven, retentionSkips, deadExpired atomic.Uint64
}

// Stats is a snapshot of the Manager's counters over every group, for
// metrics.
type Stats struct {
	Polls          uint64
	Delivered      uint64 // first deliveries
	Redelivered    uint64 // deliveries after a lapse, a nack or a redrive
	Acked          uint64
	Nacked         uint64
	Lapsed         uint64 // claims that ran out
	DeadLettered   uint64
	Redriven       uint64
	RetentionSkips uint64 // records retention removed before a group finished them
	DeadExpired    uint64 // dead letters dropped past Options.DeadLetterMaxAge
}

// Stats returns the counters.
func (m *Manager) Stats() Stats {
	c := &m.counters
	return Stats{
		Polls: c.polls.Load(), Delivered: c.delivered.Load(), Redelivered: c.redelivered.Load(),
		Acked: c.acked.Load(), Nacked: c.nacked.Load(), Lapsed: c.lapsed.Load(),
		DeadLettered: c.deadLettered.Load(), Redriven: c.redriven.Load(), RetentionSkips: c.retentionSkips.Load(),
		DeadExpired: c.deadExpired.Load(),
	}
}
