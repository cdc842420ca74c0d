package shardlog

import (
	"errors"
	"testing"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// A replica's log truncated for a new leader while a compaction of it was
// prepared: the compaction read records the truncation removed, so its
// swap must not bring them back.
func TestACompactionOvertakenByATruncationIsDiscarded(t *testing.T) {
	l := mustOpen(t, testOptions(vfs.NewMem(), OnCommit()))
	defer l.Close()
	appendN(t, l, 0, 200)
	c, err := l.PrepareCompaction(func(*segment.Record) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	cut := c.stats.To / 2 // inside the sealed segments the compaction read
	if err := l.Truncate(cut); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Commit(); !errors.Is(err, ErrCompactionStale) {
		t.Fatalf("commit after a truncation at %d: %v, want ErrCompactionStale", cut, err)
	}
	if end := l.End(); end != cut {
		t.Fatalf("the log ends at %d after the discarded compaction, want %d", end, cut)
	}
	recs := readAll(t, l)
	if n := len(recs); n != int(cut) || recs[n-1].Offset != cut-1 {
		t.Fatalf("the log holds %d records after the truncation at %d", n, cut)
	}
}
