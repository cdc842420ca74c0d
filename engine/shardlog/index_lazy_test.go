package shardlog

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// Sealed segments reopen on their header and size, the rest (last
// generation, newest time, index entries) left to load when first needed
// (here nothing verifies them first: TrustIndexes). What
// needs them still answers as before the reopen: where each generation
// ends, and a Truncate inside such a segment, after which appends go on
// and a reopen finds the same log.
func TestSegmentsOpenedOnTheirHeaderFindGenerationsAndTruncate(t *testing.T) {
	mem := vfs.NewMem()
	o := testOptions(mem, OnCommit())
	o.TrustIndexes = true
	l := mustOpen(t, o)
	n := int64(0)
	for _, g := range []uint32{1, 1, 1, 3, 3, 7} {
		for range 40 {
			if _, err := l.AppendWait([]Entry{{Key: key(n), Value: value(n)}}, g); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	l.Close()
	l = mustOpen(t, o)
	defer l.Close()
	lazy := 0
	for _, s := range *l.segs.Load() {
		if s.lazy.Load() != nil {
			lazy++
		}
	}
	if lazy < 3 {
		t.Fatalf("only %d segments opened on their header", lazy)
	}
	for gen, want := range map[uint32]int64{0: 0, 1: 120, 2: 120, 3: 200, 6: 200, 7: 240, 9: 240} {
		if got := l.GenerationEnd(gen); got != want {
			t.Fatalf("GenerationEnd(%d) = %d, want %d", gen, got, want)
		}
	}
	if _, _, err := l.Read(150, 1, nil); err != nil { // loads the entries of the segment to truncate
		t.Fatal(err)
	}
	if err := l.Truncate(140); err != nil {
		t.Fatal(err)
	}
	if l.GenerationEnd(1) != 120 || l.GenerationEnd(3) != 140 {
		t.Fatalf("after truncating at 140: generation 1 ends at %d, 3 at %d", l.GenerationEnd(1), l.GenerationEnd(3))
	}
	for n := int64(140); n < 240; n++ { // other sizes, rolling the truncated segment over: sealed again
		if _, err := l.AppendWait([]Entry{{Key: key(n), Value: value(n + 50)}}, 3); err != nil {
			t.Fatal(err)
		}
	}
	recs := readAll(t, l)
	checkPrefix(t, recs[:140], 0)
	for n := int64(140); n < 240; n++ {
		if r := recs[n]; r.Offset != n || !bytes.Equal(r.Value, value(n+50)) {
			t.Fatalf("record %d: offset %d value %q", n, r.Offset, r.Value)
		}
		if b, _, err := l.Read(n, 1, nil); err != nil || !bytes.Equal(firstValue(t, b), value(n+50)) {
			t.Fatalf("read at %d: %q, %v", n, firstValue(t, b), err)
		}
	}
	if len(recs) != 240 || l.GenerationEnd(1) != 120 || l.GenerationEnd(3) != 240 {
		t.Fatalf("appended again to 240: %d records, generation 1 ends at %d", len(recs), l.GenerationEnd(1))
	}
	l.Close()
	l = mustOpen(t, o)
	defer l.Close()
	if recs := readAll(t, l); len(recs) != 240 || l.GenerationEnd(1) != 120 {
		t.Fatalf("reopened: %d records, generation 1 ends at %d", len(recs), l.GenerationEnd(1))
	}
}

func firstValue(t *testing.T, b []byte) []byte {
	t.Helper()
	it := segment.NewIter(b)
	r, ok := it.Next()
	if !ok {
		return nil
	}
	return r.Value
}

// Retention by age after a reopen judges a segment opened on its header
// by its newest record, which its meta reads from the records after the
// index's last entry: here the cutoff falls between that entry's time and
// the segment's last record's, so the segment stays, and only those
// before it go.
func TestRetentionByAgeAfterAReopenKeepsASegmentByItsNewestRecord(t *testing.T) {
	mem := vfs.NewMem()
	o := testOptions(mem, OnCommit())
	o.Retention = Retention{MaxAge: time.Hour}
	l := mustOpen(t, o)
	const second = int64(time.Second)
	for i := int64(0); i < 300; i++ {
		if _, err := l.AppendWait([]Entry{{Key: key(i), Value: value(i), Timestamp: (i + 1) * second}}, 1); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	bases := segmentBases(t, mem)
	k, lastTs := 1, int64(0)
	for ; k < len(bases)-1; k++ { // a sealed segment whose last record has no entry of its own
		last, lastEntry := newestTimes(t, mem, bases[k])
		if lastEntry < last {
			lastTs = last
			break
		}
	}
	if lastTs == 0 {
		t.Fatal("every sealed segment ends with an index entry: the test proves nothing")
	}
	o.Now = func() time.Time { return time.Unix(0, lastTs).Add(time.Hour) } // cutoff: its last record's time
	l = mustOpen(t, o)
	defer l.Close()
	if segs, _ := l.ApplyRetention(); segs != k || l.Start() != bases[k] {
		t.Fatalf("retention removed %d segments, start %d; want %d and %d", segs, l.Start(), k, bases[k])
	}
}

// newestTimes scans the segment at base: its last record's time, and the
// time its last index entry (at 256-byte intervals) carries.
func newestTimes(t *testing.T, fs vfs.FS, base int64) (last, lastEntry int64) {
	t.Helper()
	b := readFile(t, fs, filepath.Join(testDir, segment.SegmentName(base)))
	sum, err := segment.Scan(bytes.NewReader(b), int64(len(b)), segment.ScanOptions{Sealed: true, IndexIntervalBytes: 256})
	if err != nil {
		t.Fatal(err)
	}
	return sum.MaxTimestamp, sum.Index[len(sum.Index)-1].MaxTimestamp
}

// An index rebuilt for a compacted segment says where the segment's records
// end, not where the next segment begins (what the open took for its end):
// otherwise every load would find it disagreeing with the records and scan
// the segment again.
func TestARebuiltIndexOfACompactedSegmentSaysWhereItsRecordsEnd(t *testing.T) {
	mem := vfs.NewMem()
	o := testOptions(mem, OnCommit())
	l := mustOpen(t, o)
	appendN(t, l, 0, 300)
	if _, err := l.Compact(func(r *segment.Record) bool { return r.Offset%10 == 0 }); err != nil {
		t.Fatal(err)
	}
	l.Close()
	bases := segmentBases(t, mem)
	for _, b := range bases {
		mem.Remove(filepath.Join(testDir, segment.IndexName(b)))
	}
	o.TrustIndexes = true // the reads rebuild them, not the verifier
	l = mustOpen(t, o)
	for _, r := range readAll(t, l) {
		if r.Offset%10 != 0 && r.Offset < bases[len(bases)-1] {
			t.Fatalf("record %d survived a compaction that kept every tenth", r.Offset)
		}
	}
	l.Close()
	gaps := 0
	for i, b := range bases[:len(bases)-1] {
		seg := readFile(t, mem, filepath.Join(testDir, segment.SegmentName(b)))
		sum, err := segment.Scan(bytes.NewReader(seg), int64(len(seg)), segment.ScanOptions{Sealed: true})
		if err != nil {
			t.Fatal(err)
		}
		ix, err := segment.DecodeIndex(readFile(t, mem, filepath.Join(testDir, segment.IndexName(b))))
		if err != nil || ix.Next != sum.Next || ix.DataEnd != sum.End {
			t.Fatalf("the rebuilt index of %d says %+v, %v; its records end at byte %d before offset %d", b, ix, err, sum.End, sum.Next)
		}
		if sum.Next < bases[i+1] {
			gaps++
		}
	}
	if gaps == 0 {
		t.Fatal("no compacted segment ends before the next one begins: the test proves nothing")
	}
}
