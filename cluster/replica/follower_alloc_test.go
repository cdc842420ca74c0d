package replica

import (
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment"
)

// The steady append path, a REPLICATE of a batch that continues the log,
// allocates nothing: not per record (the entries alias the frame, the
// scratch is reused) and not per batch (the acknowledgement's waiter comes
// off a free list). Measured over the whole process, the log's committer
// and the MemFS included, so their amortised growth must stay below one
// allocation per batch.
func TestFollowerAppendAllocatesNothingPerRecord(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	synctest.Test(t, func(t *testing.T) {
		r := newFolRig(t, shardlog.OnCommit(), nil)
		r.synced(1)
		const perBatch, batches = 16, 2000
		var answered, appended atomic.Int64
		answer := func(a wire.ReplicateAck) {
			answered.Add(1)
			if a.Status == wire.ReplicateAppended {
				appended.Add(1)
			}
		}
		value := make([]byte, 100)
		buf := make([]byte, 0, perBatch*segment.RecordSize(0, len(value)))
		m := &wire.Replicate{Log: folRef, Generation: 1, PrevGen: 0}
		next := int64(0)
		batch := func() {
			buf = buf[:0]
			for i := range int64(perBatch) {
				buf = segment.AppendRecordParts(buf, next+i, 1, 0, next+i+1, nil, value)
			}
			m.First, m.Records = next, buf
			if err := r.f.Replicate(folLeader, m, answer); err != nil {
				t.Fatal(err)
			}
			next += perBatch
			m.PrevGen = 1
		}
		for range 50 { // warm: the scratch, the free list, the log's queues
			batch()
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		allocs := testing.AllocsPerRun(batches, batch)
		runtime.ReadMemStats(&after)
		synctest.Wait()
		if n := answered.Load(); n != appended.Load() || n != 50+batches+1 {
			t.Fatalf("%d answers, %d appended, want %d appended", n, appended.Load(), 50+batches+1)
		}
		t.Logf("%.0f allocations per REPLICATE of %d records (%d in all over %d REPLICATEs, the committer's included)",
			allocs, perBatch, after.Mallocs-before.Mallocs, batches+1)
		if allocs != 0 {
			t.Fatalf("%v allocations per REPLICATE of %d records, want 0", allocs, perBatch)
		}
	})
}
