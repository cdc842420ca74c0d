package shardlog

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// A verifier or a load that scanned a sealed segment before a compaction
// replaced it must not write that scan's index afterwards: the part took
// the segment's name, so the old index would stand for the part's records
// (or, for a segment the compaction merged away, for no segment at all).
// Both writers are driven here at the moment the race would give them: a
// scan taken before the commit, its index written after.
func TestAnIndexScannedBeforeACompactionIsNeverWrittenAfterIt(t *testing.T) {
	const n = 160
	mem := compactionWorkload(t, n)
	l := mustOpen(t, testOptions(mem, OnCommit()))
	<-l.Verified()
	type scanned struct {
		s    *seg
		snap sealedSnapshot
		sum  segment.Summary
	}
	var before []scanned
	for _, s := range *l.segs.Load() {
		snap, ok := l.snapshotSealed(s)
		if !ok {
			continue
		}
		sum, err := l.scan(s, true, 0)
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, scanned{s, snap, sum})
	}
	if _, err := l.Compact(latestPerKey(n)); err != nil {
		t.Fatal(err)
	}
	for i, b := range before {
		if i%2 == 0 {
			l.restoreIndex(b.s, b.snap, &b.sum)
		} else {
			l.rewriteIndex(b.s, &b.sum)
		}
		b.s.release(mem)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	checkEveryIndexStandsForItsSegment(t, mem)
}

// checkEveryIndexStandsForItsSegment fails unless every index file in the
// log's directory has its segment and says where that segment's records
// end.
func checkEveryIndexStandsForItsSegment(t *testing.T, mem *vfs.MemFS) {
	t.Helper()
	names, err := mem.List(testDir)
	if err != nil {
		t.Fatal(err)
	}
	indexes := 0
	for _, name := range names {
		b, suf, ok := segment.ParseName(name)
		if !ok || suf != segment.IndexSuffix {
			continue
		}
		indexes++
		segPath := filepath.Join(testDir, segment.SegmentName(b))
		if _, err := mem.Stat(segPath); err != nil {
			t.Errorf("index %s stands for no segment: %v", name, err)
			continue
		}
		rec := readFile(t, mem, segPath)
		sum, err := segment.Scan(bytes.NewReader(rec), int64(len(rec)), segment.ScanOptions{Sealed: true})
		if err != nil {
			t.Fatal(err)
		}
		ix, err := segment.DecodeIndex(readFile(t, mem, filepath.Join(testDir, name)))
		if err != nil || ix.DataEnd != sum.End || ix.Next != sum.Next {
			t.Errorf("index %s says %+v, %v; its segment's records end at byte %d before offset %d", name, ix, err, sum.End, sum.Next)
		}
	}
	if indexes == 0 {
		t.Fatal("no index at all: the check proves nothing")
	}
}
