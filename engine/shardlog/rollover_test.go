package shardlog

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// rolloverRecords is enough records for several rollovers.
const rolloverRecords = 200

// rolloverSteps runs a single-writer workload over a traced MemFS and
// returns the trace, so a test can crash at chosen steps of each rollover.
func rolloverSteps(t *testing.T, mode FsyncMode) *traceFS {
	tr := &traceFS{MemFS: vfs.NewMem()}
	o := testOptions(tr, mode)
	l := mustOpen(t, o)
	appendN(t, l, 0, rolloverRecords)
	l.Close()
	return tr
}

// crashAt re-runs that workload with a crash after mutation n.
func crashAt(t *testing.T, mode FsyncMode, n int) (*vfs.MemFS, int64) {
	mem := vfs.NewMem()
	l := mustOpen(t, testOptions(mem, mode))
	mem.SetCrashAfter(n-mem.MutationCount(), vfs.DropUnsynced)
	var acked int64
	for i := int64(0); i < rolloverRecords; i++ {
		if _, err := l.AppendWait([]Entry{{Key: key(i), Value: value(i), Timestamp: i + 1}}, 1); err != nil {
			break
		}
		acked = i + 1
	}
	l.Close()
	if !mem.Crashed() {
		t.Fatalf("no crash at mutation %d", n)
	}
	return mem.CrashImage(), acked
}

// checkImage opens a crash image and checks it holds a byte-exact prefix
// with at least the first want records.
func checkImage(t *testing.T, img vfs.FS, mode FsyncMode, want int64, what string) *Log {
	t.Helper()
	l, err := Open(testOptions(img, mode))
	if err != nil {
		t.Fatalf("%s: does not open: %v", what, err)
	}
	recs := readAll(t, l)
	checkPrefix(t, recs, 0)
	if int64(len(recs)) < want {
		t.Fatalf("%s: %d records survived, %d were committed", what, len(recs), want)
	}
	return l
}

// The contract's test: a crash after a new segment file is created but
// before its header is durable leaves the log openable, with nothing
// committed lost, and the log goes on appending.
func TestACrashBeforeTheHeaderIsWrittenLeavesTheLogOpenable(t *testing.T) {
	tr := rolloverSteps(t, OnCommit())
	creates := tr.find("create", segment.SegmentSuffix)
	if len(creates) < 3 {
		t.Fatalf("workload created only %d segments", len(creates))
	}
	for _, n := range creates[1:] { // the first is the log's creation
		for _, at := range []int{n, n + 1} { // after create; after preallocate
			img, acked := crashAt(t, OnCommit(), at)
			l := checkImage(t, img, OnCommit(), acked, fmt.Sprintf("crash after mutation %d", at))
			appendN(t, l, l.End(), 3)
			l.Close()
		}
	}
	// A file system may make the new directory entry durable with another
	// file's fsync (ext4 commits its whole journal), leaving the segment
	// file present with no header: empty, zero-filled, or half a header.
	for _, content := range [][]byte{nil, make([]byte, 8192), segment.AppendHeader(nil, segment.Header{Base: 80})[:20]} {
		mem := vfs.NewMem()
		l := mustOpen(t, testOptions(mem, OnCommit()))
		appendN(t, l, 0, 80)
		l.Close()
		f, err := mem.Create(filepath.Join(testDir, segment.SegmentName(80)))
		if err != nil {
			t.Fatal(err)
		}
		f.WriteAtSync(content, 0)
		f.Close()
		mem.SyncDir(testDir)
		l = checkImage(t, mem, OnCommit(), 80, fmt.Sprintf("headerless segment of %d bytes", len(content)))
		if l.End() != 80 {
			t.Fatalf("end %d", l.End())
		}
		appendN(t, l, 80, 5)
		l.Close()
	}
}

// The contract's test: a crash at any step of sealing the retired segment
// (trim, sync, index) loses nothing, even under None, where the seal's
// sync is the first to make those records durable.
func TestACrashWhileSealingARetiredSegmentLosesNothing(t *testing.T) {
	for _, mode := range []FsyncMode{OnCommit(), None()} {
		tr := rolloverSteps(t, mode)
		truncs := tr.find("truncate", segment.SegmentSuffix)
		syncs := tr.find("sync", segment.SegmentSuffix)
		idx := tr.find("writesync", segment.IndexSuffix)
		if len(truncs) == 0 || len(syncs) == 0 || len(idx) == 0 {
			t.Fatalf("%v: no seal in the trace (%d truncates, %d syncs, %d index writes)", mode, len(truncs), len(syncs), len(idx))
		}
		for _, n := range append(append(truncs, syncs...), idx...) {
			img, acked := crashAt(t, mode, n)
			l := checkImage(t, img, mode, 0, fmt.Sprintf("%v: crash after mutation %d", mode, n))
			st := l.Stats()
			// Every record placed in a segment that began sealing and was
			// synced must be there: the retired segment's records precede
			// the next segment's base, which exists only after the seal.
			if mode.Kind == FsyncOnCommit && st.End < acked {
				t.Fatalf("%v: crash after mutation %d lost committed records (%d < %d)", mode, n, st.End, acked)
			}
			l.Close()
		}
		// Once a seal's sync has completed, every record of the retired
		// segment is durable in any mode: all records before the base of
		// the segment created next.
		for _, n := range syncs {
			next := tr.firstAfter(n, "create", segment.SegmentSuffix)
			if next == "" {
				continue
			}
			base, _, _ := segment.ParseName(next)
			img, _ := crashAt(t, mode, n)
			l := checkImage(t, img, mode, 0, "after the seal's sync")
			if l.End() < base {
				t.Fatalf("%v: crash after the seal's sync (mutation %d) kept %d records of the retired segment ending at %d", mode, n, l.End(), base)
			}
			l.Close()
		}
	}
}
