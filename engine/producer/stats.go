package producer

import "sync/atomic"

type counters struct {
	registered, expired, batches, duplicates, gaps, stale, unknown, inFlightRefused atomic.Uint64
}

// Stats is a snapshot of the Manager's counters, for metrics.
type Stats struct {
	Producers       int    // live producers
	Registered      uint64 // IDs issued
	Expired         uint64 // producers forgotten for idling
	Batches         uint64 // batches appended
	Duplicates      uint64 // re-sends answered from memory
	Gaps            uint64 // batches refused with the expected sequence
	Stale           uint64 // re-sends older than the remembered window
	Unknown         uint64 // batches from producers this broker does not know
	InFlightRefused uint64 // batches refused for ErrTooManyInFlight
}

// Stats returns the counters.
func (m *Manager) Stats() Stats {
	c := &m.counters
	return Stats{
		Producers: m.Producers(), Registered: c.registered.Load(), Expired: c.expired.Load(),
		Batches: c.batches.Load(), Duplicates: c.duplicates.Load(), Gaps: c.gaps.Load(),
		Stale: c.stale.Load(), Unknown: c.unknown.Load(), InFlightRefused: c.inFlightRefused.Load(),
	}
}
