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

// appendUntilRefused appends the rollover workload's records one at a
// time until one is refused (the FS crashed), and returns how many were
// acknowledged.
func appendUntilRefused(l *Log) int64 {
	var acked int64
	for i := int64(0); i < rolloverRecords; i++ {
		if _, err := l.AppendWait([]Entry{{Key: key(i), Value: value(i), Timestamp: i + 1}}, 1); err != nil {
			break
		}
		acked = i + 1
	}
	return acked
}

// crashAt re-runs that workload with a crash after mutation n.
func crashAt(t *testing.T, mode FsyncMode, n int) (*vfs.MemFS, int64) {
	mem := vfs.NewMem()
	l := mustOpen(t, testOptions(mem, mode))
	mem.SetCrashAfter(n-mem.MutationCount(), vfs.DropUnsynced)
	acked := appendUntilRefused(l)
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
// sync is the first to make those records durable. Under None the seal
// runs on the background loop, beside the committer's writes, so each
// crash is aimed at the k-th seal's step itself rather than at a mutation
// count.
func TestACrashWhileSealingARetiredSegmentLosesNothing(t *testing.T) {
	for _, mode := range []FsyncMode{OnCommit(), None()} {
		clean := rolloverSteps(t, mode)
		seals := len(clean.find("truncate", segment.SegmentSuffix))
		bases := segmentBases(t, clean)
		if seals < 3 || len(bases) != seals+1 {
			t.Fatalf("%v: %d seals of %d segments in the workload", mode, seals, len(bases))
		}
		for k := 1; k <= seals; k++ {
			for _, step := range []string{"truncate", "sync", "writesync"} {
				img, acked, retired := crashAtSeal(t, mode, k, step)
				what := fmt.Sprintf("%v: crash after the %s of seal %d (%s)", mode, step, k, retired)
				l := checkImage(t, img, mode, 0, what)
				if mode.Kind == FsyncOnCommit && l.End() < acked {
					t.Fatalf("%s lost committed records (%d < %d)", what, l.End(), acked)
				}
				// Once the seal's sync has completed, every record of the
				// retired segment is durable in any mode: all records
				// before the base of the segment after it.
				if next := bases[k]; step != "truncate" && l.End() < next {
					t.Fatalf("%s kept %d records; the retired segment ends at %d", what, l.End(), next)
				}
				l.Close()
			}
		}
	}
}

// crashAtSeal runs the rollover workload with a crash right after one step
// of the k-th seal: the trim of the retired segment ("truncate"), its sync
// ("sync") or its index write ("writesync"). It returns the crash image,
// how many appends were acknowledged, and the retired segment's name.
func crashAtSeal(t *testing.T, mode FsyncMode, k int, step string) (*vfs.MemFS, int64, string) {
	t.Helper()
	tr := &traceFS{MemFS: vfs.NewMem()}
	l := mustOpen(t, testOptions(tr, mode))
	trims, retired := 0, ""
	tr.crashOn = func(op, name string) bool {
		if op == "truncate" && filepath.Ext(name) == segment.SegmentSuffix {
			if trims++; trims == k {
				retired = name
			}
		}
		switch {
		case retired == "":
			return false
		case step == "writesync":
			return op == step && name == segment.IndexName(baseOf(retired))
		default:
			return op == step && name == retired
		}
	}
	acked := appendUntilRefused(l)
	l.Close()
	img := tr.CrashImage()
	if img == nil {
		t.Fatalf("%v: no crash after the %s of seal %d", mode, step, k)
	}
	return img, acked, retired
}

func baseOf(name string) int64 {
	b, _, _ := segment.ParseName(name)
	return b
}

// segmentBases lists the segments' bases in fs, in order.
func segmentBases(t *testing.T, fs vfs.FS) []int64 {
	t.Helper()
	names, err := fs.List(testDir)
	if err != nil {
		t.Fatal(err)
	}
	var bases []int64
	for _, n := range names {
		if b, suf, ok := segment.ParseName(n); ok && suf == segment.SegmentSuffix {
			bases = append(bases, b)
		}
	}
	return bases
}
