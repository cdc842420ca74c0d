package shardlog

import (
	"testing"
	"time"

	"github.com/felixbroker/felix/segment/vfs"
)

// Under Periodic the bytes written since the last sync are counted as
// unsynced until Sync covers them; under OnCommit an acknowledged append
// leaves nothing unsynced.
func TestStatsCountUnsyncedBytes(t *testing.T) {
	l := mustOpen(t, testOptions(vfs.NewMem(), Periodic(time.Hour)))
	defer l.Close()
	appendN(t, l, 0, 3)
	if got := l.Stats().UnsyncedBytes; got <= 0 {
		t.Fatalf("unsynced bytes after 3 appends under Periodic(1h) = %d, want > 0", got)
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := l.Stats().UnsyncedBytes; got != 0 {
		t.Fatalf("unsynced bytes after Sync = %d, want 0", got)
	}

	oc := mustOpen(t, testOptions(vfs.NewMem(), OnCommit()))
	defer oc.Close()
	appendN(t, oc, 0, 3)
	if got := oc.Stats().UnsyncedBytes; got != 0 {
		t.Fatalf("unsynced bytes under OnCommit = %d, want 0", got)
	}
}

// The observer hears of every flush, with its records and whether it was
// synced.
func TestObserverHearsFlushes(t *testing.T) {
	o := &countingObserver{}
	opts := testOptions(vfs.NewMem(), OnCommit())
	opts.Observer = o
	l := mustOpen(t, opts)
	appendN(t, l, 0, 5)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if o.records != 5 || o.syncedFlushes == 0 {
		t.Fatalf("observer saw %d records in %d synced flushes, want 5 records and at least one synced flush", o.records, o.syncedFlushes)
	}
}

type countingObserver struct {
	records, syncedFlushes int
}

func (o *countingObserver) Flushed(records, _ int, synced bool, _ time.Duration) {
	o.records += records
	if synced {
		o.syncedFlushes++
	}
}

func (o *countingObserver) Synced(time.Duration, error) {}
