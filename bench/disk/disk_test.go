package disk

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/felixbroker/felix/bench"
)

// checkSane fails unless r moved records records of recordBytes each, with
// a latency sample per record and non-zero figures.
func checkSane(t *testing.T, r bench.Result, name string, role bench.Role, records int64, recordBytes int) {
	t.Helper()
	if r.Workload != name || r.Role != role {
		t.Errorf("result %q role %q, want %q role %q", r.Workload, r.Role, name, role)
	}
	if r.Records != records || r.Bytes != records*int64(recordBytes) {
		t.Errorf("%s: %d records %d bytes, want %d records of %d bytes", name, r.Records, r.Bytes, records, recordBytes)
	}
	if !(r.RecordsPerSec > 0) || !(r.MBPerSec > 0) || r.Duration <= 0 {
		t.Errorf("%s: rates %v records/s %v MB/s over %v", name, r.RecordsPerSec, r.MBPerSec, r.Duration)
	}
	if r.Latency == nil || r.Latency.Count != records || r.Latency.P50 <= 0 || r.Latency.Max < r.Latency.P50 {
		t.Errorf("%s: latency %+v, want %d samples, 0 < p50 <= max", name, r.Latency, records)
	}
	if r.Machine == nil || r.Machine.Filesystem == "" && r.Machine.OS == "linux" {
		t.Errorf("%s: machine %+v", name, r.Machine)
	}
}

// checkNoLeftovers fails if a measurement left its file behind.
func checkNoLeftovers(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 0 {
		t.Errorf("dir holds %v (err %v) after the measurement, want nothing", entries, err)
	}
}

func TestFdatasyncBothFileKinds(t *testing.T) {
	for _, f := range []File{Growing, Prezeroed} {
		dir := t.TempDir()
		// 20 rounds of 4 KiB in a 64 KiB file: the file wraps once.
		r, err := Fdatasync(context.Background(), dir, SyncOptions{Count: 20, File: f, FileBytes: 64 << 10})
		if err != nil {
			t.Fatal(err)
		}
		checkSane(t, r, "fdatasync/"+f.String()+"/raw", bench.RoleBaseline, 20, 4096)
		if r.Params.IOPath != PathRaw || r.Params.Extra["file"] != f.String() {
			t.Errorf("params %+v", r.Params)
		}
		checkNoLeftovers(t, dir)
	}
}

func TestGroupCommitAcksEveryRecord(t *testing.T) {
	dir := t.TempDir()
	o := GroupOptions{Writers: 4, RecordBytes: 512, Records: 200, File: Prezeroed, FileBytes: 8 << 10}
	r, err := GroupCommit(context.Background(), dir, o)
	if err != nil {
		t.Fatal(err)
	}
	checkSane(t, r, "groupcommit/prezeroed/raw", bench.RoleBaseline, 200, 512)
	if r.Params.Writers != 4 {
		t.Errorf("params %+v", r.Params)
	}
	checkNoLeftovers(t, dir)
}

func TestPageCacheBandwidth(t *testing.T) {
	dir := t.TempDir()
	r, err := PageCache(context.Background(), dir, PageCacheOptions{WriteBytes: 64 << 10, TotalBytes: 1 << 20, FileBytes: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	checkSane(t, r, "pagecache/raw", bench.RoleBaseline, 16, 64<<10)
	checkNoLeftovers(t, dir)
}

// 20 writes of 64 KiB into files of 256 KiB: five fresh files, each
// written only at its end and removed when full.
func TestPageAppendWritesFreshFilesAndRemovesThem(t *testing.T) {
	dir := t.TempDir()
	r, err := PageAppend(context.Background(), dir, PageCacheOptions{WriteBytes: 64 << 10, TotalBytes: 20 << 16, FileBytes: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	checkSane(t, r, "pageappend/raw", bench.RoleBaseline, 20, 64<<10)
	checkNoLeftovers(t, dir)
}

// PageKept keeps every file it fills until the run ends, then removes
// them all.
func TestPageKeptKeepsItsFilesUntilTheEnd(t *testing.T) {
	dir := t.TempDir()
	a := &appendFile{dir: dir, limit: 2 << 10, keep: true}
	for i := range 7 {
		off, err := a.next(1 << 10)
		if err != nil {
			t.Fatal(err)
		}
		if err := writeAt(a.f, pattern(make([]byte, 1<<10)), off); err != nil {
			t.Fatal(err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != i/2+1 {
			t.Fatalf("after write %d the directory holds %d files, want %d", i, len(entries), i/2+1)
		}
	}
	if err := a.close(); err != nil {
		t.Fatal(err)
	}
	checkNoLeftovers(t, dir)
	r, err := PageKept(context.Background(), dir, PageCacheOptions{WriteBytes: 64 << 10, TotalBytes: 20 << 16, FileBytes: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	checkSane(t, r, "pagekept/raw", bench.RoleBaseline, 20, 64<<10)
	checkNoLeftovers(t, dir)
}

func TestAppendFileBeginsAFreshFileWhenFull(t *testing.T) {
	dir := t.TempDir()
	a := &appendFile{dir: dir, limit: 3 << 10}
	defer a.close()
	var names []string
	for i := range 7 {
		off, err := a.next(1 << 10)
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(i%3) << 10; off != want {
			t.Fatalf("write %d at %d, want %d", i, off, want)
		}
		if err := writeAt(a.f, pattern(make([]byte, 1<<10)), off); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			names = append(names, a.f.Name())
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Fatalf("after write %d the directory holds %d files, want 1", i, len(entries))
		}
	}
	if len(names) != 3 || names[0] == names[1] || names[1] == names[2] {
		t.Fatalf("files %v, want three different ones", names)
	}
	if fi, err := a.f.Stat(); err != nil || fi.Size() != 1<<10 {
		t.Fatalf("the third file: %v (err %v), want 1 KiB", fi, err)
	}
}

func TestOptionsAreCheckedBeforeTheDisk(t *testing.T) {
	ctx, dir := context.Background(), t.TempDir()
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"no bound", run1(Fdatasync(ctx, dir, SyncOptions{})), bench.ErrNoLimit},
		{"no writers", run1(GroupCommit(ctx, dir, GroupOptions{Records: 1})), ErrInvalid},
		{"flush bigger than the file", run1(GroupCommit(ctx, dir, GroupOptions{Writers: 8, Records: 1, RecordBytes: 1024, FileBytes: 4096})), ErrInvalid},
		{"negative count", run1(Fdatasync(ctx, dir, SyncOptions{Count: -1, Duration: 1})), ErrInvalid},
		{"no page-cache bound", run1(PageCache(ctx, dir, PageCacheOptions{})), bench.ErrNoLimit},
		{"no page-append bound", run1(PageAppend(ctx, dir, PageCacheOptions{})), bench.ErrNoLimit},
		{"write bigger than the appended file", run1(PageAppend(ctx, dir, PageCacheOptions{TotalBytes: 1 << 20, WriteBytes: 1 << 20, FileBytes: 4096})), ErrInvalid},
	}
	for _, c := range cases {
		if !errors.Is(c.err, c.want) {
			t.Errorf("%s: err %v, want %v", c.name, c.err, c.want)
		}
	}
	checkNoLeftovers(t, dir)
}

func run1(_ bench.Result, err error) error { return err }

func TestCancelledRunStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := GroupCommit(ctx, t.TempDir(), GroupOptions{Writers: 2, Records: 1 << 40})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
}

func TestRawSyncAllocatesNothing(t *testing.T) {
	file, err := openDataFile(t.TempDir(), Prezeroed, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	defer file.close()
	s, buf := rawSyncer{file: file}, pattern(make([]byte, 4096))
	allocs := testing.AllocsPerRun(20, func() {
		off, _ := file.next(len(buf))
		if err := s.writeSync(buf, off); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per write+sync, want 0", allocs)
	}
}
