package shardlog

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/bench/disk"
)

// benchDirEnv names the directory the benchmarks write in. It must be on
// the disk under test; the default is the system temp directory, which on
// the machines Felix is measured on is the root ext4 file system.
const benchDirEnv = "FELIX_BENCH_DIR"

// How long each raw baseline runs (each is run baselineRounds times). They
// are measured once per `go test` run, so they are set apart from
// -benchtime.
const (
	baselineSyncRounds   = 1500
	baselineGroupFor     = 400 * time.Millisecond
	baselinePageCacheFor = 300 * time.Millisecond
	baselineSegWriteFor  = 700 * time.Millisecond
	// baselinePageKeptBytes is what the kept-files page-cache baseline
	// writes: about what a 1 KiB x 16 row writes at -benchtime 1s here.
	baselinePageKeptBytes = 2 << 30
)

// benchBaselines are the disk's own limits, measured once per `go test` run
// in the directory the logs are written in, with bench/disk's bare loops
// (pwrite and fdatasync through golang.org/x/sys/unix).
type benchBaselines struct {
	dir     string
	machine bench.Machine
	// fsync is the write+fdatasync loop on a prezeroed file (the kind a
	// log with PrepareSegments writes its records into), by write size:
	// the payload of one append.
	fsync map[int]bench.Result
	// fsyncGrowing is the same loop on a file every write extends.
	fsyncGrowing map[int]bench.Result
	// group is the group-commit ceiling on a prezeroed file, by writers
	// and record size.
	group map[groupKey]bench.Result
	// pageCache is the bandwidth of 1 MiB pwrites into cached pages.
	pageCache bench.Result
	// pageAppend is the bandwidth of 1 MiB pwrites appended to fresh
	// 64 MiB files, never synced: new page-cache pages, written as a log
	// writes them.
	pageAppend bench.Result
	// pageKept is the same into files kept until it ends, 2 GiB in all:
	// what a bare writer of a row's volume gets, writeback included.
	pageKept bench.Result
	// segWrite is the bandwidth of writing fresh segment-sized files and
	// syncing each: what any log that keeps what it is given sustains.
	segWrite bench.Result
}

type groupKey struct{ writers, recBytes int }

var (
	baselinesOnce sync.Once
	baselines     *benchBaselines
	baselinesErr  error
)

// loadBaselines measures the baselines on first use and returns them.
func loadBaselines(b *testing.B) *benchBaselines {
	b.Helper()
	baselinesOnce.Do(func() { baselines, baselinesErr = measureBaselines() })
	if baselinesErr != nil {
		b.Fatalf("raw baselines: %v", baselinesErr)
	}
	return baselines
}

// benchRoot is the directory logs and baseline files are created in.
func benchRoot() string {
	if d := os.Getenv(benchDirEnv); d != "" {
		return d
	}
	return os.TempDir()
}

func measureBaselines() (*benchBaselines, error) {
	bl := &benchBaselines{dir: benchRoot(), fsync: map[int]bench.Result{}, fsyncGrowing: map[int]bench.Result{},
		group: map[groupKey]bench.Result{}}
	bl.machine = bench.DescribeMachine(bl.dir)
	if bl.machine.Filesystem == "tmpfs" {
		return nil, fmt.Errorf("%s is a tmpfs, where fdatasync costs nothing: set %s to a directory on the disk under test",
			bl.dir, benchDirEnv)
	}
	jobs := bl.jobs()
	runs := make([][]bench.Result, len(jobs))
	ctx := context.Background()
	for range baselineRounds { // round-robin, so a noisy moment spoils one run of several jobs, not every run of one
		for i, j := range jobs {
			r, err := j.measure(ctx)
			if err != nil {
				return nil, err
			}
			runs[i] = append(runs[i], r)
		}
	}
	for i, j := range jobs {
		j.keep(medianBy(runs[i], j.figure))
	}
	return bl, nil
}

// baselineRounds is how many times each baseline is measured; the run with
// the median figure is kept. The disk under test may be shared (other
// processes' syncs stall ours for milliseconds), and one unlucky run would
// otherwise skew every ratio of the benchmark run.
const baselineRounds = 3

// baselineJob is one raw measurement, the figure its median is taken by,
// and where the kept result goes.
type baselineJob struct {
	measure func(context.Context) (bench.Result, error)
	figure  bench.Figure
	keep    func(bench.Result)
}

func (bl *benchBaselines) jobs() []baselineJob {
	var jobs []baselineJob
	syncJob := func(bytes int, file disk.File, into map[int]bench.Result) baselineJob {
		o := disk.SyncOptions{RecordBytes: bytes, Count: baselineSyncRounds, File: file}
		return baselineJob{
			measure: func(ctx context.Context) (bench.Result, error) { return disk.Fdatasync(ctx, bl.dir, o) },
			figure:  bench.FigP50,
			keep:    func(r bench.Result) { into[bytes] = r },
		}
	}
	seen := map[int]bool{}
	for _, rec := range benchRecordBytes {
		for _, batch := range benchBatches {
			if size := rec * batch; !seen[size] {
				seen[size] = true
				jobs = append(jobs, syncJob(size, disk.Prezeroed, bl.fsync))
			}
		}
		jobs = append(jobs, syncJob(rec, disk.Growing, bl.fsyncGrowing))
		for _, writers := range benchGroupWriters {
			o := disk.GroupOptions{Writers: writers, RecordBytes: rec, Duration: baselineGroupFor, File: disk.Prezeroed}
			key := groupKey{writers, rec}
			jobs = append(jobs, baselineJob{
				measure: func(ctx context.Context) (bench.Result, error) { return disk.GroupCommit(ctx, bl.dir, o) },
				figure:  bench.FigRecordsPerSec,
				keep:    func(r bench.Result) { bl.group[key] = r },
			})
		}
	}
	return append(jobs,
		baselineJob{
			measure: func(ctx context.Context) (bench.Result, error) {
				return disk.PageCache(ctx, bl.dir, disk.PageCacheOptions{Duration: baselinePageCacheFor})
			},
			figure: bench.FigMBPerSec,
			keep:   func(r bench.Result) { bl.pageCache = r },
		},
		baselineJob{
			measure: func(ctx context.Context) (bench.Result, error) {
				return disk.PageAppend(ctx, bl.dir, disk.PageCacheOptions{Duration: baselinePageCacheFor, FileBytes: DefaultSegmentBytes})
			},
			figure: bench.FigMBPerSec,
			keep:   func(r bench.Result) { bl.pageAppend = r },
		},
		baselineJob{
			measure: func(ctx context.Context) (bench.Result, error) {
				return disk.PageKept(ctx, bl.dir, disk.PageCacheOptions{TotalBytes: baselinePageKeptBytes, FileBytes: DefaultSegmentBytes})
			},
			figure: bench.FigMBPerSec,
			keep:   func(r bench.Result) { bl.pageKept = r },
		},
		baselineJob{
			measure: func(ctx context.Context) (bench.Result, error) {
				return measureSegmentWrites(ctx, bl.dir, baselineSegWriteFor)
			},
			figure: bench.FigMBPerSec,
			keep:   func(r bench.Result) { bl.segWrite = r },
		})
}

// medianBy returns the result whose figure f is the median of rs.
func medianBy(rs []bench.Result, f bench.Figure) bench.Result {
	sorted := slices.Clone(rs)
	slices.SortFunc(sorted, func(a, b bench.Result) int { return cmp.Compare(a.Figure(f), b.Figure(f)) })
	return sorted[len(sorted)/2]
}

// measureSegmentWrites writes fresh files of DefaultSegmentBytes in 1 MiB
// writes, syncing and removing each when full, for d: the sustained
// bandwidth of new data made durable one segment at a time. The page-cache
// baseline rewrites pages that stay cached; a log never writes the same
// page twice, so on a machine where fresh page-cache pages or the disk are
// slow this, not that, bounds fsync=none and periodic.
func measureSegmentWrites(ctx context.Context, dir string, d time.Duration) (bench.Result, error) {
	w := &segmentWriter{dir: dir, chunk: make([]byte, 1<<20)}
	for i := range w.chunk {
		w.chunk[i] = byte('a' + i%26)
	}
	defer w.close()
	m, err := bench.Run(ctx, bench.Load{Workers: 1, Duration: d}, nil, w.op)
	if err != nil {
		return bench.Result{}, err
	}
	p := bench.Params{RecordBytes: len(w.chunk), Writers: 1, Fsync: "per-segment", IOPath: disk.PathRaw}
	return bench.NewResult("segwrite/"+disk.PathRaw, bench.RoleBaseline, p, m), nil
}

// segmentWriter is measureSegmentWrites' one file at a time.
type segmentWriter struct {
	dir   string
	chunk []byte
	f     *os.File
	off   int64
}

func (w *segmentWriter) op(int) (int64, int64, error) {
	if w.f == nil {
		f, err := os.CreateTemp(w.dir, "felix-bench-seg-*.dat")
		if err != nil {
			return 0, 0, err
		}
		w.f, w.off = f, 0
	}
	if _, err := w.f.WriteAt(w.chunk, w.off); err != nil {
		return 0, 0, err
	}
	w.off += int64(len(w.chunk))
	if w.off >= DefaultSegmentBytes {
		if err := w.f.Sync(); err != nil {
			return 0, 0, err
		}
		if err := w.close(); err != nil {
			return 0, 0, err
		}
	}
	return 1, int64(len(w.chunk)), nil
}

func (w *segmentWriter) close() error {
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	if rmErr := os.Remove(w.f.Name()); err == nil {
		err = rmErr
	}
	w.f = nil
	return err
}

// benchGroupWriters are the writer counts the group-commit baseline runs
// at: every appenders x window product of the matrix.
var benchGroupWriters = []int{1, 8, 64}

// logf writes the baselines once into the benchmark log, so a run's output
// carries the machine and the raw figures its ratios divide by.
func (bl *benchBaselines) logf(b *testing.B) {
	b.Logf("machine: %s", bl.machine.String())
	for _, rec := range benchRecordBytes {
		g := bl.fsyncGrowing[rec]
		b.Logf("raw fdatasync, growing file, %d B: p50 %v p99 %v", rec, g.Latency.P50, g.Latency.P99)
	}
	for _, size := range sortedKeys(bl.fsync) {
		r := bl.fsync[size]
		b.Logf("raw fdatasync, prezeroed file, %d B: p50 %v p99 %v", size, r.Latency.P50, r.Latency.P99)
	}
	for _, rec := range benchRecordBytes {
		for _, w := range benchGroupWriters {
			r := bl.group[groupKey{w, rec}]
			b.Logf("raw group commit, prezeroed, %d writers x %d B: %.0f records/s, p50 %v", w, rec, r.RecordsPerSec, r.Latency.P50)
		}
	}
	b.Logf("raw page cache, 1 MiB writes round a cached 64 MiB file: %.0f MB/s", bl.pageCache.MBPerSec)
	b.Logf("raw page cache, 1 MiB writes appended to fresh 64 MiB files, unsynced: %.0f MB/s", bl.pageAppend.MBPerSec)
	b.Logf("raw page cache, the same into files kept until 2 GiB are written: %.0f MB/s", bl.pageKept.MBPerSec)
	b.Logf("raw fresh 64 MiB files, 1 MiB writes, synced per file: %.0f MB/s", bl.segWrite.MBPerSec)
}

func sortedKeys(m map[int]bench.Result) []int { return slices.Sorted(maps.Keys(m)) }
