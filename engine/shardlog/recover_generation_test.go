package shardlog

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// Recovery restores the log's last generation: the generation of its last
// record, wherever that record is, also when the newest segments hold none.

// appendGen appends n records from first under gen, waiting for each.
func appendGen(t *testing.T, l *Log, first, n int64, gen uint32) {
	t.Helper()
	cw := &chanWaiter{ch: make(chan error, 1)}
	for i := first; i < first+n; i++ {
		off, err := l.Append([]Entry{{Key: key(i), Value: value(i), Timestamp: i + 1}}, gen, cw)
		if err == nil {
			err = <-cw.ch
		}
		if err != nil || off != i {
			t.Fatalf("append %d under generation %d: offset %d, %v", i, gen, off, err)
		}
	}
}

// wantGenerations checks what a reopened log says of its generations: its
// last is last, it refuses an append below it (appending nothing), and
// GenerationEnd(last) is its end.
func wantGenerations(t *testing.T, l *Log, last uint32, what string) {
	t.Helper()
	end := l.End()
	if got := l.LastGeneration(); got != last {
		t.Fatalf("%s: LastGeneration %d, want %d", what, got, last)
	}
	if got := l.GenerationEnd(last); got != end {
		t.Fatalf("%s: GenerationEnd(%d) = %d, want the end %d", what, last, got, end)
	}
	if last > 0 {
		if _, err := l.AppendWait([]Entry{{Value: []byte("stale")}}, last-1); !errors.Is(err, ErrStaleGeneration) {
			t.Fatalf("%s: append under generation %d: %v, want ErrStaleGeneration", what, last-1, err)
		}
		err := l.AppendAt(end, last, entriesAt(end, 1), last-1, nil)
		if !errors.Is(err, ErrStaleGeneration) {
			t.Fatalf("%s: AppendAt under generation %d: %v, want ErrStaleGeneration", what, last-1, err)
		}
		if l.End() != end {
			t.Fatalf("%s: a refused append moved the end from %d to %d", what, end, l.End())
		}
	}
}

// A crash right after a rollover made the next segment (header written and
// synced, the directory synced) and before any record reached it leaves an
// empty active segment after sealed ones of generation 5: under OnCommit,
// where the committer seals the retired segment before it makes the next
// (under None a crash there loses the retired segment's unsynced records,
// and the log ends in it). With PrepareSegments the new segment is the
// renamed spare.
func TestACrashLeavingAnEmptyActiveSegmentKeepsTheLastGeneration(t *testing.T) {
	mode := OnCommit()
	for _, prepare := range []bool{false, true} {
		tr := &traceFS{MemFS: vfs.NewMem()}
		o := testOptions(tr, mode)
		o.PrepareSegments = prepare
		first := segment.SegmentName(0)
		created := ""
		tr.crashOn = func(op, name string) bool { // under tr.mu
			if (op == "create" || op == "rename") && filepath.Ext(name) == segment.SegmentSuffix && name != first {
				created = name
			}
			return created != "" && op == "syncdir"
		}
		l := mustOpen(t, o)
		cw := &chanWaiter{ch: make(chan error, 1)}
		for i := int64(0); i < rolloverRecords; i++ {
			_, err := l.Append([]Entry{{Key: key(i), Value: value(i), Timestamp: i + 1}}, 5, cw)
			if err == nil {
				err = <-cw.ch
			}
			if err != nil {
				break
			}
		}
		l.Close()
		img := tr.CrashImage()
		if img == nil {
			t.Fatalf("prepare %v: no crash after the rollover", prepare)
		}
		what := fmt.Sprintf("prepare %v: crash after creating %s", prepare, created)
		ro := testOptions(img, mode)
		ro.PrepareSegments = prepare
		ro.TrustIndexes = true // no background verification to load the entries
		l = mustOpen(t, ro)
		list := *l.segs.Load()
		if len(list) < 2 {
			t.Fatalf("%s: %d segments", what, len(list))
		}
		newest := list[len(list)-2].lazy.Load()
		if newest == nil || newest.meta.Load() == nil || newest.entries.Load() != nil || l.Recovery().IndexRebuilds != 0 {
			t.Fatalf("%s: the newest sealed segment's generation did not come from its index head alone", what)
		}
		checkPrefix(t, readAll(t, l), 0)
		base := baseOf(created)
		if l.End() != base {
			t.Fatalf("%s: end %d, want %d (the sealed segments' records)", what, l.End(), base)
		}
		if list := *l.segs.Load(); list.last().base != base || list.last().fillNext != base {
			t.Fatalf("%s: the active segment is not the empty %s", what, created)
		}
		wantGenerations(t, l, 5, what)
		end := l.End()
		appendGen(t, l, end, 3, 6)
		l.Close()
		l = mustOpen(t, ro)
		wantGenerations(t, l, 6, what+", appended under 6 and reopened")
		l.Close()
	}
}

// An empty segment made by hand after a clean close: the segment before it,
// active at the close, has no index, so recovery learns its generation from
// a scan of it (and writes its index).
func TestAnEmptyActiveSegmentAfterACleanCloseKeepsTheLastGeneration(t *testing.T) {
	mem := vfs.NewMem()
	o := testOptions(mem, OnCommit())
	l := mustOpen(t, o)
	appendGen(t, l, 0, 40, 3)
	appendGen(t, l, 40, 60, 5)
	end := l.End()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := mem.Create(filepath.Join(testDir, segment.SegmentName(end)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAtSync(segment.AppendHeader(nil, segment.Header{Base: end}), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	mem.SyncDir(testDir)
	l = mustOpen(t, o)
	if l.End() != end || len(*l.segs.Load()) < 3 {
		t.Fatalf("reopened at %d with %d segments", l.End(), len(*l.segs.Load()))
	}
	// The segment before the empty one was the active one at Close: it has
	// no index, so its generation comes from a scan, which writes one.
	if _, err := mem.Stat(filepath.Join(testDir, segment.IndexName((*l.segs.Load())[len(*l.segs.Load())-2].base))); err != nil {
		t.Fatalf("the scanned segment's index was not written: %v", err)
	}
	wantGenerations(t, l, 5, "an empty active segment after a clean close")
	if got := l.GenerationEnd(3); got != 40 {
		t.Fatalf("GenerationEnd(3) = %d, want 40", got)
	}
	mustAppendAt(t, l, end, 5, 2, 5) // the record before end is generation 5's
	l.Close()
}

// A clean close right after a rollover: the newest segment holds the one
// record that rolled it over.
func TestACleanCloseRightAfterARolloverKeepsTheLastGeneration(t *testing.T) {
	mem := vfs.NewMem()
	o := testOptions(mem, OnCommit())
	l := mustOpen(t, o)
	var i int64
	for ; len(*l.segs.Load()) < 3; i++ {
		appendGen(t, l, i, 1, 5)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, o)
	defer l.Close()
	if list := *l.segs.Load(); l.End() != i || list.last().fillNext != list.last().base+1 {
		t.Fatalf("reopened at %d; the newest segment should hold one record", l.End())
	}
	wantGenerations(t, l, 5, "a clean close right after a rollover")
}

// Truncate into an older segment removes the newer ones: the log's last
// generation is that older record's, before and after a restart (clean,
// and a crash right after the truncation).
func TestTruncateIntoAnOlderSegmentKeepsItsGenerationAcrossARestart(t *testing.T) {
	for _, crash := range []bool{false, true} {
		mem := vfs.NewMem()
		o := testOptions(mem, OnCommit())
		l := mustOpen(t, o)
		appendGen(t, l, 0, 50, 3)
		appendGen(t, l, 50, 100, 5)
		segs := len(*l.segs.Load())
		if err := l.Truncate(30); err != nil {
			t.Fatal(err)
		}
		if n := len(*l.segs.Load()); n >= segs || (*l.segs.Load()).last().base >= 30 {
			t.Fatalf("truncation kept %d of %d segments", n, segs)
		}
		wantGenerations(t, l, 3, "after Truncate(30)")
		img := vfs.FS(mem)
		if crash {
			mem.Crash(vfs.DropUnsynced)
			img = mem.CrashImage()
		}
		l.Close()
		l = mustOpen(t, testOptions(img, OnCommit()))
		what := fmt.Sprintf("reopened after Truncate(30) (crash %v)", crash)
		if l.End() != 30 {
			t.Fatalf("%s: end %d", what, l.End())
		}
		wantGenerations(t, l, 3, what)
		l.Close()
	}
}
