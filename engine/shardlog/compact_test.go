package shardlog

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
	"github.com/felixbroker/felix/segment/vfs/errorfs"
)

// latestPerKey is the KeepFunc of a key/value log: keep the last record of
// each key among the first n appended by appendN.
func latestPerKey(n int64) KeepFunc {
	last := map[string]int64{}
	for i := range n {
		last[string(key(i))] = i
	}
	return func(r *segment.Record) bool { return last[string(r.Key)] == r.Offset }
}

// survivors lists the offsets below n that keep retains, and every offset
// from n to end (the records compaction does not read).
func survivors(keep KeepFunc, n, end int64) []int64 {
	var out []int64
	for i := range end {
		r := segment.Record{Offset: i, Key: key(i), Value: value(i)}
		if i >= n || keep(&r) {
			out = append(out, i)
		}
	}
	return out
}

func offsetsOf(recs []segment.Record) []int64 {
	var out []int64
	for _, r := range recs {
		out = append(out, r.Offset)
	}
	return out
}

// checkRecords asserts the log holds exactly the records at offsets want,
// each byte as appendN wrote it.
func checkRecords(t testing.TB, l *Log, want []int64, what string) {
	t.Helper()
	recs := readAll(t, l)
	if got := offsetsOf(recs); !slices.Equal(got, want) {
		t.Fatalf("%s: offsets %v, want %v", what, got, want)
	}
	for _, r := range recs {
		if !bytes.Equal(r.Key, key(r.Offset)) || !bytes.Equal(r.Value, value(r.Offset)) {
			t.Fatalf("%s: record %d has key %q value %q", what, r.Offset, r.Key, r.Value)
		}
	}
}

func TestCompactionKeepsOffsetsAndDropsTheRest(t *testing.T) {
	mem := vfs.NewMem()
	l := mustOpen(t, testOptions(mem, OnCommit()))
	appendN(t, l, 0, 200)
	start, end := l.Start(), l.End()
	keep := latestPerKey(200)
	st, err := l.Compact(keep)
	if err != nil {
		t.Fatal(err)
	}
	if st.From != 0 || st.To <= 0 || st.Kept == 0 || st.Kept >= st.Records || st.BytesAfter >= st.BytesBefore {
		t.Fatalf("stats %+v", st)
	}
	if l.Start() != start || l.End() != end {
		t.Fatalf("start/end moved: [%d, %d) -> [%d, %d)", start, end, l.Start(), l.End())
	}
	want := survivors(keep, st.To, end)
	checkRecords(t, l, want, "after compaction")
	if through := l.CompactedThrough(); through != st.LastDropped+1 || through > st.To {
		t.Fatalf("compacted through %d, last dropped %d, range end %d", through, st.LastDropped, st.To)
	}
	appendN(t, l, end, 5) // offsets go on from End: nothing was renumbered
	want = append(want, end, end+1, end+2, end+3, end+4)
	checkRecords(t, l, want, "after appending")
	l.Close()
	for _, trust := range []bool{false, true} {
		o := testOptions(mem, OnCommit())
		o.TrustIndexes = trust
		l2 := mustOpen(t, o)
		checkRecords(t, l2, want, fmt.Sprintf("reopened, trust indexes %v", trust))
		if l2.CompactedThrough() < st.LastDropped+1 || l2.CompactedThrough() > st.To {
			t.Fatalf("reopened: compacted through %d", l2.CompactedThrough())
		}
		if r := l2.Recovery(); len(r.RemovedFiles) != 0 || r.TornBytes != 0 {
			t.Fatalf("reopen found work to do: %+v", r)
		}
		l2.Close()
	}
}

func TestAReadFromACompactedOffsetStartsAtTheNextRecord(t *testing.T) {
	l := mustOpen(t, testOptions(vfs.NewMem(), OnCommit()))
	defer l.Close()
	appendN(t, l, 0, 120)
	const keepEvery = 10 // keep 0, 10, 20, ... below the range end
	st, err := l.Compact(func(r *segment.Record) bool { return r.Offset%keepEvery == 0 })
	if err != nil {
		t.Fatal(err)
	}
	for from := int64(0); from < st.To; from++ {
		b, next, err := l.Read(from, 1, nil)
		if err != nil {
			t.Fatalf("read at %d: %v", from, err)
		}
		it := segment.NewIter(b)
		r, ok := it.Next()
		want := (from + keepEvery - 1) / keepEvery * keepEvery
		if want >= st.To {
			want = st.To // the first record of the next segment, never compacted
		}
		if !ok || r.Offset != want || next != want+1 {
			t.Fatalf("read at %d: record %d (ok %v), next %d; want record %d", from, r.Offset, ok, next, want)
		}
	}
}

func TestAGapThatRunsToTheEndReadsAsNothing(t *testing.T) {
	mem := vfs.NewMem()
	l := mustOpen(t, testOptions(mem, OnCommit()))
	appendN(t, l, 0, 60)
	l.Close()
	l = mustOpen(t, testOptions(mem, OnCommit())) // the reopened log's active segment is the last
	defer l.Close()
	if err := l.Truncate(l.End()); err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 60, 1) // make sure there is an active segment after the sealed ones
	st, err := l.Compact(func(*segment.Record) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	b, next, err := l.Read(0, 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	it := segment.NewIter(b)
	if r, ok := it.Next(); !ok || r.Offset != st.To || next <= st.To {
		t.Fatalf("read from 0 after dropping everything sealed: first %d (ok %v), next %d; range end %d", r.Offset, ok, next, st.To)
	}
}

func TestCompactingAgainFoldsTheCompactedSegments(t *testing.T) {
	mem := vfs.NewMem()
	l := mustOpen(t, testOptions(mem, OnCommit()))
	appendN(t, l, 0, 150)
	if _, err := l.Compact(latestPerKey(150)); err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 150, 150)
	keep := latestPerKey(300)
	st, err := l.Compact(keep)
	if err != nil {
		t.Fatal(err)
	}
	if st.From != 0 {
		t.Fatalf("second compaction starts at %d", st.From)
	}
	want := survivors(keep, st.To, l.End())
	checkRecords(t, l, want, "after two compactions")
	l.Close()
	checkRecords(t, mustOpen(t, testOptions(mem, OnCommit())), want, "reopened")
}

func TestLargeLiveSetsSplitIntoSeveralParts(t *testing.T) {
	l := mustOpen(t, testOptions(vfs.NewMem(), OnCommit()))
	defer l.Close()
	appendN(t, l, 0, 200)
	st, err := l.Compact(func(*segment.Record) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if st.Parts < 2 || st.Kept != st.Records || st.LastDropped != -1 || l.CompactedThrough() != 0 {
		t.Fatalf("stats %+v, compacted through %d", st, l.CompactedThrough())
	}
	checkRecords(t, l, survivors(func(*segment.Record) bool { return true }, 0, l.End()), "kept everything")
}

func TestCompactionRunsBesideAppendsAndReads(t *testing.T) {
	l := mustOpen(t, testOptions(vfs.NewMem(), Periodic(0)))
	defer l.Close()
	appendN(t, l, 0, 100)
	latest := latestPerKey(100)
	keep := func(r *segment.Record) bool { return r.Offset >= 100 || latest(r) }
	var wg sync.WaitGroup
	wg.Go(func() { appendN(t, l, 100, 200) })
	wg.Go(func() {
		for range 20 {
			readAll(t, l)
		}
	})
	var compactErr error
	wg.Go(func() {
		for range 3 {
			if _, err := l.Compact(keep); err != nil && !errors.Is(err, ErrNothingToCompact) {
				compactErr = err
				return
			}
		}
	})
	wg.Wait()
	if compactErr != nil {
		t.Fatal(compactErr)
	}
	// Records from 100 on were never dropped (keep only knows the first 100).
	recs := readAll(t, l)
	var tail []int64
	for _, r := range recs {
		if r.Offset >= 100 {
			tail = append(tail, r.Offset)
		}
	}
	if len(tail) != 200 || tail[0] != 100 || tail[199] != 299 {
		t.Fatalf("appends beside compaction: %d records from 100, %v..", len(tail), tail[:min(3, len(tail))])
	}
}

func TestOnlyOneCompactionAtATime(t *testing.T) {
	mem := vfs.NewMem()
	l := mustOpen(t, testOptions(mem, OnCommit()))
	defer l.Close()
	if _, err := l.Compact(func(*segment.Record) bool { return true }); !errors.Is(err, ErrNothingToCompact) {
		t.Fatalf("empty log: %v", err)
	}
	appendN(t, l, 0, 100)
	c, err := l.PrepareCompaction(func(*segment.Record) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.PrepareCompaction(func(*segment.Record) bool { return false }); !errors.Is(err, ErrCompacting) {
		t.Fatalf("second prepare: %v", err)
	}
	c.Discard()
	names, _ := mem.List(testDir)
	for _, n := range names {
		if isPartName(n) {
			t.Fatalf("discard left %s", n)
		}
	}
	checkPrefix(t, readAll(t, l), 0)
	if _, err := c.Commit(); !errors.Is(err, ErrCompactionStale) {
		t.Fatalf("commit after discard: %v", err)
	}
}

func TestACompactionOverTakenByRetentionIsDiscarded(t *testing.T) {
	mem := vfs.NewMem()
	o := testOptions(mem, OnCommit())
	o.Retention = Retention{MaxBytes: 6000}
	l := mustOpen(t, o)
	defer l.Close()
	appendN(t, l, 0, 200)
	c, err := l.PrepareCompaction(func(*segment.Record) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := l.ApplyRetention(); n == 0 {
		t.Fatal("retention removed nothing")
	}
	if _, err := c.Commit(); !errors.Is(err, ErrCompactionStale) {
		t.Fatalf("commit after retention: %v", err)
	}
	checkPrefix(t, readAll(t, l), l.Start())
}

// compactionWorkload appends n records over a small log, closes it, and
// returns the FS and the mutation count at the start of the compaction.
func compactionWorkload(t *testing.T, n int64) *vfs.MemFS {
	mem := vfs.NewMem()
	l := mustOpen(t, testOptions(mem, OnCommit()))
	appendN(t, l, 0, n)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return mem
}

// The crash windows of a compaction, like rollover's: a crash after any
// mutation it makes leaves a log that opens, holding either every record it
// held before or exactly the compacted set, never a mixture (no dropped
// record back, no kept one lost), and opening it again changes nothing.
func TestACrashAtAnyStepOfACompactionLeavesTheOldOrTheNewLog(t *testing.T) {
	const n = 160
	keep := latestPerKey(n)
	probe := compactionWorkload(t, n)
	l := mustOpen(t, testOptions(probe, OnCommit()))
	before := probe.MutationCount()
	st, err := l.Compact(keep)
	if err != nil {
		t.Fatal(err)
	}
	steps := probe.MutationCount() - before
	l.Close()
	all := survivors(func(*segment.Record) bool { return true }, 0, n)
	compacted := survivors(keep, st.To, n)
	sawOld, sawNew := false, false
	for step := 1; step <= steps; step++ {
		for _, mode := range []vfs.CrashMode{vfs.DropUnsynced, vfs.TearLastWrite(20)} {
			mem := compactionWorkload(t, n)
			l := mustOpen(t, testOptions(mem, OnCommit()))
			mem.SetCrashAfter(step, mode)
			l.Compact(keep)
			l.Close()
			if !mem.Crashed() {
				t.Fatalf("step %d: no crash", step)
			}
			what := fmt.Sprintf("crash after compaction mutation %d of %d (%v)", step, steps, mode)
			img := mem.CrashImage()
			l2, err := Open(testOptions(img, OnCommit()))
			if err != nil {
				t.Fatalf("%s: does not open: %v", what, err)
			}
			got := offsetsOf(readAll(t, l2))
			switch {
			case slices.Equal(got, all):
				sawOld = true
				checkRecords(t, l2, all, what)
			case slices.Equal(got, compacted):
				sawNew = true
				checkRecords(t, l2, compacted, what)
			default:
				t.Fatalf("%s: offsets %v are neither the old log nor the compacted one", what, got)
			}
			end := l2.End()
			l2.Close()
			l3 := mustOpen(t, testOptions(img, OnCommit()))
			if r := l3.Recovery(); l3.End() != end || len(r.RemovedFiles) != 0 || r.TornBytes != 0 {
				t.Fatalf("%s: reopen not idempotent: %+v", what, r)
			}
			checkRecords(t, l3, got, what+", reopened")
			appendN(t, l3, end, 2)
			l3.Close()
		}
	}
	if !sawOld || !sawNew {
		t.Fatalf("the sweep never saw the old log (%v) or the new one (%v)", sawOld, sawNew)
	}
}

// An IO error at any step of a compaction leaves the log readable and a
// reopen holding the old or the new set.
func TestAnErrorAtAnyStepOfACompactionLosesNothing(t *testing.T) {
	const n = 160
	keep := latestPerKey(n)
	ops := []errorfs.OpKind{errorfs.Create, errorfs.Write, errorfs.WriteSync, errorfs.Sync, errorfs.Rename, errorfs.Remove, errorfs.SyncDir}
	for _, op := range ops {
		for nth := 1; nth <= 4; nth++ {
			mem := compactionWorkload(t, n)
			efs := errorfs.Wrap(mem)
			l := mustOpen(t, testOptions(efs, OnCommit()))
			efs.Inject(errorfs.Rule{Op: op, Nth: nth, Err: syscall.EIO})
			st, cerr := l.Compact(keep)
			what := fmt.Sprintf("%v #%d failing (compaction error %v)", op, nth, cerr)
			all := survivors(func(*segment.Record) bool { return true }, 0, n)
			compacted := survivors(keep, st.To, n)
			got := offsetsOf(readAll(t, l))
			if !slices.Equal(got, all) && !slices.Equal(got, compacted) {
				t.Fatalf("%s: live log reads %v", what, got)
			}
			l.Close()
			efs.Clear()
			l2, err := Open(testOptions(mem, OnCommit()))
			if err != nil {
				t.Fatalf("%s: reopen: %v", what, err)
			}
			got = offsetsOf(readAll(t, l2))
			if !slices.Equal(got, all) && !slices.Equal(got, compacted) {
				t.Fatalf("%s: reopened log reads %v", what, got)
			}
			l2.Close()
		}
	}
}

func TestACommitFileIsOnlyBelievedWhole(t *testing.T) {
	rec := commitRecord{from: 10, to: 90, parts: []int64{10, 40}}
	b := appendCommit(nil, rec)
	got, ok := decodeCommit(b)
	if !ok || got.from != 10 || got.to != 90 || !slices.Equal(got.parts, rec.parts) {
		t.Fatalf("round trip: %+v %v", got, ok)
	}
	for i := range b {
		if _, ok := decodeCommit(b[:i]); ok {
			t.Fatalf("a commit cut at byte %d decodes", i)
		}
		c := bytes.Clone(b)
		c[i] ^= 1
		if _, ok := decodeCommit(c); ok {
			t.Fatalf("a commit with byte %d flipped decodes", i)
		}
	}
}

func TestRecoveryRemovesThePartsOfAnUncommittedCompaction(t *testing.T) {
	mem := compactionWorkload(t, 100)
	l := mustOpen(t, testOptions(mem, OnCommit()))
	if _, err := l.PrepareCompaction(latestPerKey(100)); err != nil {
		t.Fatal(err)
	}
	img := mem.Crash(vfs.DropUnsynced)
	l2 := mustOpen(t, testOptions(img, OnCommit()))
	defer l2.Close()
	checkPrefix(t, readAll(t, l2), 0)
	if r := l2.Recovery(); len(r.RemovedFiles) == 0 {
		t.Fatalf("nothing removed: %+v", r)
	}
	names, _ := img.List(testDir)
	for _, n := range names {
		if isPartName(n) || n == commitName {
			t.Fatalf("%s left behind", filepath.Join(testDir, n))
		}
	}
	l.Close()
}
