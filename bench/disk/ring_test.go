package disk

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/ring"
)

// openDrivers opens the portable driver, and io_uring where the kernel
// allows it; both are closed when the test ends.
func openDrivers(t *testing.T) []ring.Driver {
	t.Helper()
	var ds []ring.Driver
	for _, m := range []ring.Mode{ring.ModePortable, ring.ModeUring} {
		d, err := ring.Open(ring.Config{Mode: m, Entries: 16, Workers: 2})
		if errors.Is(err, ring.ErrUnavailable) {
			t.Logf("no %v here: %v", m, err)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		ds = append(ds, d)
	}
	return ds
}

func TestThroughEachDriver(t *testing.T) {
	ctx := context.Background()
	for _, d := range openDrivers(t) {
		kind := string(d.Kind())
		dir := t.TempDir()
		r, err := RingFdatasync(ctx, dir, d, SyncOptions{Count: 10, File: Growing, FileBytes: 16 << 10})
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		checkSane(t, r, "fdatasync/growing/"+kind, bench.RoleWorkload, 10, 4096)
		g, err := RingGroupCommit(ctx, dir, d, GroupOptions{Writers: 3, Records: 60, RecordBytes: 256, File: Prezeroed, FileBytes: 4 << 10})
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		checkSane(t, g, "groupcommit/prezeroed/"+kind, bench.RoleWorkload, 60, 256)
		if g.Params.IOPath != kind {
			t.Errorf("io path %q, want %q", g.Params.IOPath, kind)
		}
		checkNoLeftovers(t, dir)
	}
}

// The bytes a driver writes land where the bare path would put them.
func TestRingSyncerWritesTheRecord(t *testing.T) {
	for _, d := range openDrivers(t) {
		file := mustFile(t)
		s := newRingSyncer(d, file)
		if err := s.writeSync([]byte("felix"), 3); err != nil {
			t.Fatalf("%s: %v", d.Kind(), err)
		}
		got, err := os.ReadFile(file.f.Name())
		if err != nil || !bytes.Equal(got, []byte("\x00\x00\x00felix")) {
			t.Errorf("%s: file holds %q (err %v)", d.Kind(), got, err)
		}
		buf := pattern(make([]byte, 512))
		if allocs := testing.AllocsPerRun(10, func() { _ = s.writeSync(buf, 0) }); allocs != 0 {
			t.Errorf("%s: %v allocations per write+sync, want 0", d.Kind(), allocs)
		}
	}
}

func TestSuiteSetsTheBareFiguresBesideEachDriver(t *testing.T) {
	drivers := openDrivers(t)
	dir := t.TempDir()
	var started []string
	s := Suite{
		Dir:          dir,
		Sync:         SyncOptions{Count: 5, FileBytes: 16 << 10},
		Group:        GroupOptions{Records: 20, RecordBytes: 128, FileBytes: 8 << 10},
		GroupWriters: []int{1, 4},
		PageCache:    PageCacheOptions{TotalBytes: 256 << 10, WriteBytes: 64 << 10, FileBytes: 128 << 10},
		Drivers:      drivers,
		Progress: func(label string, _ bench.Totals) func() {
			started = append(started, label)
			return func() {}
		},
	}
	results, err := RunSuite(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	perGroup := 1 + len(drivers)
	if want := 2*perGroup + 2*2*perGroup + 3; len(results) != want || len(started) != want {
		t.Fatalf("%d results, %d progress lines, want %d of each", len(results), len(started), want)
	}
	for i, r := range results {
		if r.Role == bench.RoleBaseline {
			continue
		}
		raw := results[i-i%perGroup] // the bare run heads its group
		if len(r.Baselines) != 1 || r.Baselines[0].Name != PathRaw || r.Baselines[0].Workload != raw.Workload {
			t.Errorf("%s: baselines %+v, want the bare %s", r.Workload, r.Baselines, raw.Workload)
			continue
		}
		if _, ok := r.Baselines[0].Ratios[bench.FigRecordsPerSec]; !ok {
			t.Errorf("%s: no records/s ratio", r.Workload)
		}
	}
	var table bytes.Buffer
	if err := bench.WriteTable(&table, results); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "groupcommit/growing/raw") || !strings.Contains(table.String(), "pagecache/raw") ||
		!strings.Contains(table.String(), "pageappend/raw") || !strings.Contains(table.String(), "pagekept/raw") {
		t.Errorf("table lacks a measurement:\n%s", table.String())
	}
	if err := bench.WriteReport(filepath.Join(t.TempDir(), "report"), results); err != nil {
		t.Fatal(err)
	}
	checkNoLeftovers(t, dir)
}
