package shardlog

import (
	"bytes"
	"errors"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
	"github.com/felixbroker/felix/segment/vfs/errorfs"
)

// gateFS holds the Sync of every file hold accepts until release, telling
// arrived each time one is held, with the caller's stack.
type gateFS struct {
	vfs.FS
	hold    func(name string) bool
	arrived chan heldSync
	mu      sync.Mutex
	open    chan struct{} // closed by release
}

type heldSync struct {
	name  string
	stack string
}

func newGateFS(fs vfs.FS, hold func(name string) bool) *gateFS {
	return &gateFS{FS: fs, hold: hold, arrived: make(chan heldSync, 64), open: make(chan struct{})}
}

func (g *gateFS) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

func (g *gateFS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &gateFile{File: f, g: g, name: filepath.Base(name)}, nil
}

func (g *gateFS) Create(name string) (vfs.File, error) {
	f, err := g.FS.Create(name)
	return g.wrap(name, f, err)
}

func (g *gateFS) OpenReadWrite(name string) (vfs.File, error) {
	f, err := g.FS.OpenReadWrite(name)
	return g.wrap(name, f, err)
}

type gateFile struct {
	vfs.File
	g    *gateFS
	name string
}

func (f *gateFile) Sync() error {
	if f.g.hold(f.name) {
		select {
		case <-f.g.open:
		default:
			buf := make([]byte, 1<<16)
			f.g.arrived <- heldSync{name: f.name, stack: string(buf[:runtime.Stack(buf, false)])}
			<-f.g.open
		}
	}
	return f.File.Sync()
}

func isSegment(name string) bool { return filepath.Ext(name) == segment.SegmentSuffix }

// appendUntilSegments appends records from first on, one at a time, each
// acknowledged, until the log has n segments; it returns the next record.
// Run on a goroutine of its own, it closes done when it returns.
func appendUntilSegments(t *testing.T, l *Log, first int64, n int) int64 {
	i := first
	for l.Stats().Segments < n {
		if _, err := l.AppendWait([]Entry{{Key: key(i), Value: value(i), Timestamp: i + 1}}, 1); err != nil {
			t.Errorf("append %d: %v", i, err)
			return i
		}
		i++
	}
	return i
}

// Under None a rollover hands the retired segment to the background loop:
// appends go on, and are acknowledged, while its sync has not even begun
// to finish; the durable watermark stays behind it, and Sync seals it.
func TestARolloverUnderNoneDoesNotWaitForTheRetiredSegmentsSync(t *testing.T) {
	g := newGateFS(vfs.NewMem(), isSegment)
	l := mustOpen(t, testOptions(g, None()))
	defer l.Close()
	defer g.release()
	done := make(chan int64)
	go func() { done <- appendUntilSegments(t, l, 0, retiringMax) }()
	var end int64
	for end == 0 {
		select {
		case end = <-done:
		case h := <-g.arrived:
			if strings.Contains(h.stack, "commitLoop") {
				t.Fatalf("the committer waited for the sync of %s:\n%s", h.name, h.stack)
			}
		}
	}
	st := l.Stats()
	if st.End != end || st.Segments != retiringMax || st.Durable != 0 {
		t.Fatalf("with every segment sync held: %+v, want end %d, %d segments, nothing durable", st, end, retiringMax)
	}
	if want := st.Bytes - int64(st.Segments)*segment.HeaderSize; st.UnsyncedBytes != want {
		t.Fatalf("unsynced bytes %d, want every record's (%d)", st.UnsyncedBytes, want)
	}
	g.release()
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if st := l.Stats(); st.Durable != end || st.UnsyncedBytes != 0 {
		t.Fatalf("after Sync: %+v", st)
	}
}

// A crash while a retired segment waits for its seal: the page cache may
// have written later segments back while it kept some of the retired one.
// Recovery keeps the retired segment's whole records up to the first one
// missing, removes every later segment, and the log is a gapless prefix.
func TestACrashBeforeARetiredSegmentIsSealedCutsTheLogThere(t *testing.T) {
	for _, hole := range []bool{false, true} {
		mem := vfs.NewMem()
		// The first segment seals; the second's seal sync is held.
		g := newGateFS(mem, func(name string) bool { return isSegment(name) && name != segment.SegmentName(0) })
		l := mustOpen(t, testOptions(g, None()))
		next := appendUntilSegments(t, l, 0, 3)
		bases := segmentBases(t, mem)
		if h := <-g.arrived; h.name != segment.SegmentName(bases[1]) {
			t.Fatalf("held the sync of %s, want the second segment's", h.name)
		}
		appendN(t, l, next, 3) // a few more records in the third
		// The page cache wrote the third segment back, and (hole) the
		// second but for one page.
		writtenBack := []int64{bases[2]}
		if hole {
			writtenBack = append(writtenBack, bases[1])
		}
		for _, b := range writtenBack {
			f, err := mem.OpenReadWrite(filepath.Join(testDir, segment.SegmentName(b)))
			if err != nil {
				t.Fatal(err)
			}
			f.Sync()
			f.Close()
		}
		img := mem.Crash(vfs.DropUnsynced)
		g.release()
		l.Close()
		if hole {
			f, err := img.OpenReadWrite(filepath.Join(testDir, segment.SegmentName(bases[1])))
			if err != nil {
				t.Fatal(err)
			}
			f.WriteAtSync(make([]byte, 512), 1024)
			f.Close()
		}

		l = mustOpen(t, testOptions(img, None()))
		recs := readAll(t, l)
		checkPrefix(t, recs, 0)
		r := l.Recovery()
		if !slices.Contains(r.RemovedFiles, segment.SegmentName(bases[2])) {
			t.Fatalf("hole %v: the segment after the unsealed one was kept: %+v", hole, r)
		}
		if hole && (l.End() <= bases[1] || l.End() >= bases[2]) || !hole && l.End() != bases[1] {
			t.Fatalf("hole %v: the log ends at %d; segments begin at %v", hole, l.End(), bases)
		}
		end := l.End()
		appendN(t, l, end, 3)
		l.Close()
		l = mustOpen(t, testOptions(img, None()))
		if r := l.Recovery(); l.End() != end+3 || r.TornBytes != 0 || len(r.RemovedFiles) != 0 {
			t.Fatalf("hole %v: reopen: end %d (want %d), recovery %+v", hole, l.End(), end+3, r)
		}
		l.Close()
	}
}

// A recovery point left in a segment compaction has since rewritten (a
// crash between a seal and the point's move, with a compaction between)
// changes nothing: a compacted segment is whole by construction, so
// recovery verifies it and keeps every record, gaps and all.
func TestARecoveryPointInACompactedSegmentKeepsEverything(t *testing.T) {
	mem := vfs.NewMem()
	l := mustOpen(t, testOptions(mem, None()))
	appendN(t, l, 0, 200)
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Compact(func(r *segment.Record) bool { return r.Offset%3 == 0 }); err != nil {
		t.Fatal(err)
	}
	want := readAll(t, l)
	bases := segmentBases(t, mem)
	if err := l.writePoint(point{base: bases[0], pos: segment.HeaderSize}); err != nil {
		t.Fatal(err)
	}
	img := mem.Crash(vfs.DropUnsynced)
	l.Close()
	l2, err := Open(testOptions(img, None()))
	if err != nil {
		t.Fatalf("open with the point in a compacted segment: %v", err)
	}
	defer l2.Close()
	got := readAll(t, l2)
	if len(got) != len(want) || l2.End() != 200 || len(l2.Recovery().RemovedFiles) != 0 {
		t.Fatalf("%d records (end %d, recovery %+v), want %d", len(got), l2.End(), l2.Recovery(), len(want))
	}
	for i := range got {
		if got[i].Offset != want[i].Offset || !bytes.Equal(got[i].Value, want[i].Value) {
			t.Fatalf("record %d: offset %d, want %d", i, got[i].Offset, want[i].Offset)
		}
	}
}

// EIO on the background seal of a retired segment poisons the log as a
// failed sync on the committer does: appends fail from then on (matching
// ErrPoisoned and EIO), and every record acknowledged before stays
// readable.
func TestEIOOnARetiredSegmentsSealPoisonsTheLog(t *testing.T) {
	efs := errorfs.Wrap(vfs.NewMem())
	l := mustOpen(t, testOptions(efs, None()))
	defer l.Close()
	efs.Inject(errorfs.Rule{Op: errorfs.Sync, PathContains: segment.SegmentSuffix, Nth: 1, Err: syscall.EIO})
	deadline := time.Now().Add(10 * time.Second)
	var acked int64
	for ; ; acked++ {
		_, err := l.AppendWait([]Entry{{Key: key(acked), Value: value(acked), Timestamp: acked + 1}}, 1)
		if err != nil {
			if !errors.Is(err, ErrPoisoned) || !errors.Is(err, syscall.EIO) {
				t.Fatalf("append %d: %v, want ErrPoisoned and EIO", acked, err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d appends and the log is not poisoned (%d faults injected)", acked, efs.Injected())
		}
	}
	if efs.Injected() != 1 || l.Stats().Segments < 2 {
		t.Fatalf("injected %d, %d segments", efs.Injected(), l.Stats().Segments)
	}
	recs := readAll(t, l)
	checkPrefix(t, recs, 0)
	if int64(len(recs)) < acked {
		t.Fatalf("%d records readable, %d were acknowledged", len(recs), acked)
	}
}
