package shardlog

import (
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

func TestTruncateRemovesTheTailAndAppendsContinueThere(t *testing.T) {
	mem := vfs.NewMem()
	o := testOptions(mem, OnCommit())
	l := mustOpen(t, o)
	appendN(t, l, 0, 150)
	segsBefore := l.Stats().Segments
	for _, at := range []int64{149, 120, 61, 60} {
		if err := l.Truncate(at); err != nil {
			t.Fatalf("truncate at %d: %v", at, err)
		}
		if l.End() != at {
			t.Fatalf("end %d after truncate at %d", l.End(), at)
		}
		recs := readAll(t, l)
		if int64(len(recs)) != at {
			t.Fatalf("%d records after truncate at %d", len(recs), at)
		}
		checkPrefix(t, recs, 0)
	}
	if l.Stats().Segments >= segsBefore {
		t.Fatalf("truncation kept %d of %d segments", l.Stats().Segments, segsBefore)
	}
	appendN(t, l, 60, 100)
	l.Close()
	l2 := mustOpen(t, o)
	defer l2.Close()
	checkPrefix(t, readAll(t, l2), 0)
	if l2.End() != 160 {
		t.Fatalf("end %d after reopen", l2.End())
	}
	if err := l2.Truncate(-1); !errors.Is(err, ErrBelowStart) {
		t.Fatalf("truncate below start: %v", err)
	}
	if err := l2.Truncate(161); !errors.Is(err, ErrPastEnd) {
		t.Fatalf("truncate past end: %v", err)
	}
}

func TestGenerationEndFindsWhereEachGenerationStops(t *testing.T) {
	l := mustOpen(t, testOptions(vfs.NewMem(), OnCommit()))
	defer l.Close()
	gens := []uint32{1, 1, 1, 3, 3, 7}
	for i, g := range gens {
		for range 20 {
			if _, err := l.AppendWait([]Entry{{Value: value(int64(i))}}, g); err != nil {
				t.Fatal(err)
			}
		}
	}
	for gen, want := range map[uint32]int64{0: 0, 1: 60, 2: 60, 3: 100, 6: 100, 7: 120, 9: 120} {
		if got := l.GenerationEnd(gen); got != want {
			t.Fatalf("GenerationEnd(%d) = %d, want %d", gen, got, want)
		}
	}
	if err := l.Truncate(70); err != nil {
		t.Fatal(err)
	}
	if l.LastGeneration() != 3 {
		t.Fatalf("last generation %d after truncating into generation 3", l.LastGeneration())
	}
	if _, err := l.AppendWait([]Entry{{Value: []byte("x")}}, 2); !errors.Is(err, ErrStaleGeneration) {
		t.Fatalf("append below generation 3 after truncate: %v", err)
	}
}

func TestRetentionBySizeRemovesOldestSealedSegmentsOnly(t *testing.T) {
	mem := vfs.NewMem()
	o := testOptions(mem, None())
	o.Retention = Retention{MaxBytes: 10000}
	l := mustOpen(t, o)
	defer l.Close()
	appendN(t, l, 0, 400)
	// Under None up to four retired segments wait for the background
	// loop's seal, and retention takes only sealed ones: Sync seals them
	// all, so the bound below holds whatever the loop has done so far.
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	segs, bytes := l.ApplyRetention()
	if segs == 0 || bytes == 0 {
		t.Fatal("retention removed nothing")
	}
	st := l.Stats()
	if st.Bytes > 10000+o.SegmentBytes || l.Start() == 0 {
		t.Fatalf("after retention: %+v", st)
	}
	if _, _, err := l.Read(0, 100, nil); !errors.Is(err, ErrBelowStart) {
		t.Fatalf("read below the retained start: %v", err)
	}
	recs := readAll(t, l)
	checkPrefix(t, recs, l.Start())
	names, _ := mem.List(testDir)
	for _, n := range names {
		if base, _, ok := segment.ParseName(n); ok && base < l.Start() {
			t.Fatalf("%s still on disk below start %d", n, l.Start())
		}
	}
}

func TestRetentionByAgeNeverRemovesTheActiveSegment(t *testing.T) {
	var now atomic.Int64 // the log's background loop reads it too
	now.Store(time.Unix(1000, 0).UnixNano())
	o := testOptions(vfs.NewMem(), None())
	o.Retention = Retention{MaxAge: time.Hour}
	o.Now = func() time.Time { return time.Unix(0, now.Load()) }
	l := mustOpen(t, o)
	defer l.Close()
	for i := int64(0); i < 200; i++ {
		if _, err := l.AppendWait([]Entry{{Key: key(i), Value: value(i)}}, 1); err != nil {
			t.Fatal(err)
		}
	}
	if segs, _ := l.ApplyRetention(); segs != 0 {
		t.Fatalf("removed %d young segments", segs)
	}
	// Under None a retired segment waits for the background loop's seal;
	// retention takes only sealed ones. Sync seals them all.
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	now.Add(int64(2 * time.Hour))
	l.ApplyRetention()
	if st := l.Stats(); st.Segments != 1 || l.End() != 200 {
		t.Fatalf("after age retention: %+v", st)
	}
	if l.Start() == 0 {
		t.Fatal("start did not move")
	}
}

// A missing or damaged index is rebuilt from a scan of its segment when a
// read (or the verifier) first needs it: the open reads no index. The
// records read back whole and the index files are whole again.
func TestADamagedIndexIsRebuilt(t *testing.T) {
	mem := vfs.NewMem()
	o := testOptions(mem, OnCommit())
	l := mustOpen(t, o)
	appendN(t, l, 0, 200)
	l.Close()
	names, _ := mem.List(testDir)
	var idx []string
	for _, n := range names {
		if filepath.Ext(n) == segment.IndexSuffix {
			idx = append(idx, filepath.Join(testDir, n))
		}
	}
	if len(idx) < 2 {
		t.Fatalf("only %d index files", len(idx))
	}
	for _, trust := range []bool{false, true} {
		mem.Remove(idx[0])
		flip(t, mem, idx[1], 50) // the first entry's position
		o.TrustIndexes = trust
		l := mustOpen(t, o)
		checkPrefix(t, readAll(t, l), 0)
		l.Close()
		for _, path := range idx[:2] {
			if _, err := segment.DecodeIndex(readFile(t, mem, path)); err != nil {
				t.Fatalf("trust %v: %s after the reads: %v", trust, path, err)
			}
		}
	}
}

// A segment retention removed stays removed after a crash: the removal is
// made durable.
func TestRetentionSurvivesACrash(t *testing.T) {
	mem := vfs.NewMem()
	o := testOptions(mem, None())
	o.Retention = Retention{MaxBytes: 10000}
	l := mustOpen(t, o)
	appendN(t, l, 0, 400)
	if segs, _ := l.ApplyRetention(); segs == 0 {
		t.Fatal("retention removed nothing")
	}
	start := l.Start()
	img := mem.Crash(vfs.DropUnsynced)
	l.Close()
	l2 := mustOpen(t, testOptions(img, None()))
	defer l2.Close()
	if l2.Start() != start {
		t.Fatalf("start %d after a crash, %d before", l2.Start(), start)
	}
}
