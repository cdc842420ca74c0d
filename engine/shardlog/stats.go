package shardlog

import (
	"sync/atomic"

	"github.com/felixbroker/felix/segment"
)

type counters struct {
	appends, records, bytes atomic.Int64
	flushes, syncs          atomic.Int64
	retainedSegments        atomic.Int64
}

// Stats is a snapshot of a log's position and work, for metrics.
type Stats struct {
	Start, End, Written, Durable int64
	Appended                     int64 // offset the next append gets
	Segments                     int
	Bytes                        int64 // bytes in all segments
	// UnsyncedBytes is what the active segment holds past its last
	// fdatasync: what a machine crash could take (0 under OnCommit once
	// each flush is acknowledged).
	UnsyncedBytes int64
	Appends, Records, AppendedBytes,
	Flushes, Syncs, RetainedSegments int64
	// The background verification of the sealed segments Open took on
	// their index (verify.go): segments left to verify, segments and bytes
	// verified, and verifications an IO error cut short.
	VerifyPendingSegments, VerifiedSegments, VerifiedBytes, VerifyFailures int64
	// Offline is set once damage found after Open took the log offline
	// (offline.go): reads and appends fail until it is reopened.
	Offline bool
}

// Stats returns a snapshot.
func (l *Log) Stats() Stats {
	l.mu.Lock()
	next := l.next
	l.mu.Unlock()
	st := Stats{
		Start: l.start.Load(), End: l.visible.Load(), Written: l.written.Load(), Durable: l.durable.Load(),
		Appended: next,
		Appends:  l.counters.appends.Load(), Records: l.counters.records.Load(), AppendedBytes: l.counters.bytes.Load(),
		Flushes: l.counters.flushes.Load(), Syncs: l.counters.syncs.Load(), RetainedSegments: l.counters.retainedSegments.Load(),
	}
	list := *l.segs.Load()
	st.Segments = len(list)
	for _, s := range list {
		st.Bytes += s.visibleEnd.Load()
	}
	st.UnsyncedBytes = l.unsyncedBytes()
	st.VerifyPendingSegments, st.VerifiedSegments = l.verify.pending.Load(), l.verify.verified.Load()
	st.VerifiedBytes, st.VerifyFailures = l.verify.bytes.Load(), l.verify.failures.Load()
	st.Offline = l.offline.err.Load() != nil
	return st
}

// unsyncedBytes is what the segments from the durable point's on hold past
// it: the active segment's written end minus its durable position, plus
// the same for each retired segment not yet sealed (nothing past a
// segment's header is known synced before the durable point reaches it).
func (l *Log) unsyncedBytes() int64 {
	l.wmu.Lock()
	durable := l.durablePoint
	l.wmu.Unlock()
	var n int64
	for _, s := range *l.segs.Load() {
		if s.base < durable.base {
			continue
		}
		synced := int64(segment.HeaderSize)
		if s.base == durable.base {
			synced = durable.pos
		}
		n += max(0, s.visibleEnd.Load()-synced)
	}
	return n
}
