package shardlog

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/felixbroker/felix/segment/vfs"
)

// waitSpare waits until the preparation started at Open (or by the last
// rollover) has finished.
func waitSpare(l *Log) { l.prep.done.Wait() }

// activeSeg is the segment the committer writes into.
func activeSeg(l *Log) *seg {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	return l.active
}

func TestANewLogLeavesItsUnpreparedFirstSegmentOnceASpareIsReady(t *testing.T) {
	o := testOptions(vfs.NewMem(), OnCommit())
	o.PrepareSegments = true
	l := mustOpen(t, o)
	defer l.Close()
	if !activeSeg(l).unprepared.Load() {
		t.Fatal("a new log's first segment came from no spare but is not marked unprepared")
	}
	waitSpare(l)
	appendN(t, l, 0, 2)
	s := activeSeg(l)
	if s.base != 1 || s.unprepared.Load() {
		t.Fatalf("after a spare was ready the second record went to segment %d (unprepared %v); want a prepared segment at 1",
			s.base, s.unprepared.Load())
	}
	appendN(t, l, 2, 3)
	if s := activeSeg(l); s.base != 1 {
		t.Fatalf("a prepared segment was left early: active segment %d", s.base)
	}
	checkPrefix(t, readAll(t, l), 0)
}

func TestAReopenedTruncatedOrFullSizeSegmentIsJudgedByItsSize(t *testing.T) {
	mem := vfs.NewMem()
	o := testOptions(mem, OnCommit())
	o.PrepareSegments = true
	l := mustOpen(t, o)
	waitSpare(l)
	appendN(t, l, 0, 3) // record 0 in the first segment, 1 and 2 in the prepared one
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, o)
	if s := activeSeg(l); s.base != 1 || s.unprepared.Load() {
		t.Fatalf("reopened active segment %d unprepared %v; want the prepared segment 1", s.base, s.unprepared.Load())
	}
	if err := l.Truncate(1); err != nil {
		t.Fatal(err)
	}
	if err := l.Truncate(0); err != nil { // back into the sealed, trimmed first segment
		t.Fatal(err)
	}
	if s := activeSeg(l); s.base != 0 || !s.unprepared.Load() {
		t.Fatalf("after truncating into a sealed segment: active %d unprepared %v", s.base, s.unprepared.Load())
	}
	l.Close()
}

func TestOnlyOnCommitWithPrepareSegmentsMarksSegmentsUnprepared(t *testing.T) {
	for _, c := range []struct {
		mode    FsyncMode
		prepare bool
	}{{OnCommit(), false}, {None(), true}, {Periodic(0), true}} {
		o := testOptions(vfs.NewMem(), c.mode)
		o.PrepareSegments = c.prepare
		l := mustOpen(t, o)
		waitSpare(l)
		appendN(t, l, 0, 20)
		for _, s := range *l.segs.Load() {
			if s.unprepared.Load() {
				t.Errorf("%v, prepare %v: segment %d marked unprepared", c.mode, c.prepare, s.base)
			}
		}
		l.Close()
	}
}

func TestThePreparerSyncsItsZerosInPieces(t *testing.T) {
	cfs := &countingFS{FS: vfs.NewMem()}
	o := testOptions(cfs, OnCommit())
	o.SegmentBytes = 4 * prepSyncBytes
	o.PrepareSegments = true
	l := mustOpen(t, o)
	defer l.Close()
	before := cfs.count() // the first segment's header
	waitSpare(l)
	if got := cfs.count() - before; got != 4 {
		t.Fatalf("the preparer synced %d times filling %d bytes; want one sync per %d bytes", got, o.SegmentBytes, prepSyncBytes)
	}
}

// creatingFS counts the files created under each name.
type creatingFS struct {
	vfs.FS
	mu      sync.Mutex
	creates map[string]int
}

func (c *creatingFS) Create(name string) (vfs.File, error) {
	c.mu.Lock()
	c.creates[filepath.Base(name)]++
	c.mu.Unlock()
	return c.FS.Create(name)
}

func (c *creatingFS) created(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.creates[name]
}

// Under None and Periodic no acknowledgement waits for a sync, so a spare
// would only double the disk writes: PrepareSegments prepares none there.
func TestOnlyOnCommitPreparesSpares(t *testing.T) {
	for _, c := range []struct {
		mode     FsyncMode
		prepares bool
	}{{OnCommit(), true}, {None(), false}, {Periodic(0), false}} {
		cfs := &creatingFS{FS: vfs.NewMem(), creates: map[string]int{}}
		o := testOptions(cfs, c.mode)
		o.PrepareSegments = true
		l := mustOpen(t, o)
		waitSpare(l)
		appendN(t, l, 0, 100)
		waitSpare(l)
		segs := len(*l.segs.Load())
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if segs < 3 {
			t.Fatalf("%v: the workload made %d segments, want rollovers", c.mode, segs)
		}
		// Under OnCommit a rollover that finds no spare ready yet creates
		// its segment itself, so not every segment comes from a spare.
		spares := cfs.created(prepName)
		if c.prepares && spares == 0 || !c.prepares && spares != 0 {
			t.Errorf("%v: %d spares prepared for %d segments", c.mode, spares, segs)
		}
	}
}
