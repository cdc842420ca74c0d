package shardlog

import (
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/ring"
	"github.com/felixbroker/felix/segment/vfs"
)

// The matrix of BenchmarkAppend.
var (
	benchRecordBytes = []int{128, 1024} // value bytes per record (no key)
	benchBatches     = []int{1, 16}     // records per Append
	benchIOs         = []struct {
		name string
		mode ring.Mode
	}{{"portable", ring.ModePortable}, {"uring", ring.ModeUring}} // portable first: each uring row carries its x-portable ratios
	benchModes = []struct {
		name string
		mode FsyncMode
	}{{"on_commit", OnCommit()}, {"periodic", Periodic(DefaultPeriodicInterval)}, {"none", None()}}
)

// benchWindow is the outstanding appends of the pipelined one-appender
// shape: as many as the 64-appender shape has in all.
const benchWindow = 64

// benchShape is how many goroutines append and how many appends each keeps
// outstanding (window 1: strictly synchronous).
type benchShape struct{ appenders, window int }

// benchShapes: one appender pipelined (window 64) and 8 and 64 synchronous
// appenders in every mode, and under OnCommit also one synchronous
// appender, the shape of the fdatasync latency goal.
func benchShapes(k FsyncKind) []benchShape {
	shapes := []benchShape{{1, benchWindow}, {8, 1}, {64, 1}}
	if k == FsyncOnCommit {
		shapes = append([]benchShape{{1, 1}}, shapes...)
	}
	return shapes
}

// BenchmarkAppend measures the log on the real disk, over each IO path, at
// each FsyncMode, record size, batch and appender shape:
//
//	BenchmarkAppend/io=uring/fsync=on_commit/rec=1024/batch=16/appenders=64/window=1
//
// One op is one Append of batch records. Every appender is a goroutine with
// its own reusable Waiter; window=1 appends and waits for the ack before the
// next (strictly synchronous), window=64 issues appends back to back with
// at most 64 unacknowledged (pipelined). Each sub-benchmark opens a fresh
// log (64 MiB segments, PrepareSegments on, as the broker runs it, which
// prepares spares under OnCommit only; the first spare ready before the
// clock starts) in $FELIX_BENCH_DIR (default the temp directory; a tmpfs
// is refused), kept across its growing b.N. Each row runs on the portable
// path and then at once on io_uring, so that the two see the same disk.
//
// Reported: records/s, MB/s (value bytes), ack latency p50/p99/p999 per
// record (from Append to the Waiter call), allocs/op, and ratios to raw
// baselines measured once per run in the same directory (bench/disk, bare
// system calls):
//
//	p50-x-fsync        p50 / raw pwrite+fdatasync p50, prezeroed file, same bytes (on_commit)
//	recs/s-x-gc        records/s / raw group commit at appenders*window writers, same record size (on_commit)
//	MB/s-x-pagecache   MB/s / raw page-cache bandwidth, rewriting a cached file (none, periodic)
//	MB/s-x-pageappend  MB/s / raw page-cache bandwidth, appending to fresh files unsynced (none, periodic)
//	MB/s-x-pagekept    MB/s / the same into files kept until the end, 2 GiB (none, periodic)
//	MB/s-x-segwrite    MB/s / raw bandwidth of fresh 64 MiB files synced one by one (none, periodic)
//	recs/s-x-portable  records/s / the same row on the portable path, run just before (uring rows)
//	p50-x-portable     p50 / the same row's p50 on the portable path (uring rows)
func BenchmarkAppend(b *testing.B) {
	loadBaselines(b).logf(b)
	fss := openBenchIOs(b)
	defer closeBenchLog(b) // before the drivers it uses
	portable := map[string]bench.Result{}
	for _, m := range benchModes {
		for _, rec := range benchRecordBytes {
			for _, batch := range benchBatches {
				for _, sh := range benchShapes(m.mode.Kind) {
					row := "fsync=" + m.name + "/rec=" + strconv.Itoa(rec) + "/batch=" + strconv.Itoa(batch) +
						"/appenders=" + strconv.Itoa(sh.appenders) + "/window=" + strconv.Itoa(sh.window)
					for i, io := range benchIOs { // each row on both paths back to back, so both see the same disk
						b.Run("io="+io.name+"/"+row, func(b *testing.B) {
							if fss[i] == nil {
								b.Skipf("%v path unavailable", io.mode)
							}
							r := runAppendBench(b, fss[i], m.mode, rec, batch, sh)
							if io.mode == ring.ModePortable {
								portable[row] = r
							}
							reportAppend(b, r, m.mode.Kind, rec, batch, sh, portable, row, io.mode)
						})
					}
				}
			}
		}
	}
}

// openBenchIOs opens a driver for each of benchIOs, closed when b ends, and
// returns a file system over each (nil where the path is unavailable).
func openBenchIOs(b *testing.B) []vfs.FS {
	fss := make([]vfs.FS, len(benchIOs))
	for i, io := range benchIOs {
		d, err := ring.Open(ring.Config{Mode: io.mode})
		if err != nil {
			b.Logf("%v path unavailable: %v", io.mode, err)
			continue
		}
		b.Cleanup(func() { d.Close() })
		fss[i] = vfs.NewOS(d)
	}
	return fss
}

// runAppendBench makes b.N appends of batch records of rec bytes, split
// between sh.appenders goroutines, on a fresh log, and returns what it saw.
func runAppendBench(b *testing.B, fs vfs.FS, mode FsyncMode, rec, batch int, sh benchShape) bench.Result {
	loadBaselines(b)
	l := openBenchLog(b, fs, mode)
	value := make([]byte, rec)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	recorder := bench.NewRecorder(sh.appenders)
	appenders := make([]*benchAppender, sh.appenders)
	for i := range appenders {
		appenders[i] = newBenchAppender(l, value, batch, sh.window, recorder.Lane(i))
	}
	start := make(chan struct{})
	errs := make([]error, sh.appenders)
	var wg sync.WaitGroup
	for i, a := range appenders {
		n := b.N / sh.appenders
		if i < b.N%sh.appenders {
			n++
		}
		wg.Go(func() {
			<-start
			errs[i] = a.run(n)
		})
	}
	b.ReportAllocs()
	b.ResetTimer()
	began := time.Now()
	close(start)
	wg.Wait()
	elapsed := time.Since(began)
	b.StopTimer()
	for _, err := range errs {
		if err != nil {
			b.Fatalf("append: %v", err)
		}
	}
	records, bytes := recorder.Totals()
	m := bench.Measurement{Started: began, Elapsed: elapsed, Records: records, Bytes: bytes, Latency: recorder.Latency()}
	p := bench.Params{RecordBytes: rec, Batch: batch, Writers: sh.appenders, Fsync: mode.String(),
		Extra: map[string]string{"window": strconv.Itoa(sh.window)}}
	return bench.NewResult("shardlog/append", bench.RoleWorkload, p, m)
}

// benchLog is the log of the sub-benchmark that ran last. Go calls a
// sub-benchmark's function several times as it grows b.N; those calls share
// one log, so each sub-benchmark pays for one fresh log and its first
// spare, not one per call, and the later calls find the log warm.
var benchLog struct {
	name string
	log  *Log
	dir  string
}

// openBenchLog returns the log of the running sub-benchmark: on its first
// call a fresh log in its own directory under benchRoot, settled (writing
// into a prepared segment, the next spare ready) before the clock starts,
// with the previous sub-benchmark's log closed and removed first.
func openBenchLog(b *testing.B, fs vfs.FS, mode FsyncMode) *Log {
	if benchLog.log != nil && benchLog.name == b.Name() {
		return benchLog.log
	}
	closeBenchLog(b)
	dir, err := os.MkdirTemp(benchRoot(), "felix-shardlog-bench-*")
	if err != nil {
		b.Fatal(err)
	}
	l, err := Open(Options{FS: fs, Dir: dir, Fsync: mode, PrepareSegments: true, SegmentBytes: benchSegmentBytes(b)})
	if err != nil {
		os.RemoveAll(dir)
		b.Fatal(err)
	}
	settleBenchLog(b, l)
	benchLog.name, benchLog.log, benchLog.dir = b.Name(), l, dir
	return l
}

// benchSegmentBytesEnv sets the benchmark logs' segment size (default
// DefaultSegmentBytes, the size the goals are read at). A size larger than
// a row writes shows the log without rollover, whose sync of the retired
// segment is what ties None and Periodic to the disk.
const benchSegmentBytesEnv = "FELIX_BENCH_SEGMENT_BYTES"

func benchSegmentBytes(b *testing.B) int64 {
	v := os.Getenv(benchSegmentBytesEnv)
	if v == "" {
		return DefaultSegmentBytes
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1<<20 {
		b.Fatalf("%s=%q: want a size in bytes of at least 1 MiB", benchSegmentBytesEnv, v)
	}
	return n
}

// settleBenchLog brings a fresh log to the state a running one is in: its
// records going into a prepared segment, with the next spare ready. Under
// OnCommit a new log's first segment is left for the spare at the second
// append, and the preparation that rollover starts would otherwise run
// (64 MiB of zeros and their syncs) inside the measurement.
func settleBenchLog(b *testing.B, l *Log) {
	l.prep.done.Wait()
	if !activeSeg(l).unprepared.Load() {
		return
	}
	for range 2 {
		if _, err := l.AppendWait([]Entry{{Value: []byte("settle")}}, 1); err != nil {
			b.Fatal(err)
		}
	}
	if activeSeg(l).unprepared.Load() {
		b.Fatal("the log did not move to a prepared segment")
	}
	l.prep.done.Wait()
}

// closeBenchLog closes and removes the last sub-benchmark's log, if any.
func closeBenchLog(b *testing.B) {
	if benchLog.log == nil {
		return
	}
	if err := benchLog.log.Close(); err != nil {
		b.Errorf("close %s: %v", benchLog.name, err)
	}
	os.RemoveAll(benchLog.dir)
	benchLog.name, benchLog.log, benchLog.dir = "", nil, ""
}

// reportAppend adds r's figures and the ratios the goals name to the
// benchmark line.
func reportAppend(b *testing.B, r bench.Result, k FsyncKind, rec, batch int, sh benchShape,
	portable map[string]bench.Result, row string, io ring.Mode) {
	bl := loadBaselines(b)
	b.ReportMetric(r.RecordsPerSec, "recs/s")
	b.ReportMetric(r.MBPerSec, "MB/s")
	if lat := r.Latency; lat != nil {
		b.ReportMetric(float64(lat.P50), "p50-ns")
		b.ReportMetric(float64(lat.P99), "p99-ns")
		b.ReportMetric(float64(lat.P999), "p999-ns")
	}
	if k == FsyncOnCommit {
		r.AddBaseline("fsync", bl.fsync[rec*batch])
		r.AddBaseline("gc", bl.group[groupKey{sh.appenders * sh.window, rec}])
	} else {
		r.AddBaseline("pagecache", bl.pageCache)
		r.AddBaseline("pageappend", bl.pageAppend)
		r.AddBaseline("pagekept", bl.pageKept)
		r.AddBaseline("segwrite", bl.segWrite)
	}
	if p, ok := portable[row]; ok && io != ring.ModePortable {
		r.AddBaseline("portable", p)
	}
	for _, base := range r.Baselines {
		switch base.Name {
		case "fsync":
			reportRatio(b, base, bench.FigP50, "p50-x-fsync")
		case "gc":
			reportRatio(b, base, bench.FigRecordsPerSec, "recs/s-x-gc")
		case "pagecache":
			reportRatio(b, base, bench.FigMBPerSec, "MB/s-x-pagecache")
		case "pageappend":
			reportRatio(b, base, bench.FigMBPerSec, "MB/s-x-pageappend")
		case "pagekept":
			reportRatio(b, base, bench.FigMBPerSec, "MB/s-x-pagekept")
		case "segwrite":
			reportRatio(b, base, bench.FigMBPerSec, "MB/s-x-segwrite")
		case "portable":
			reportRatio(b, base, bench.FigRecordsPerSec, "recs/s-x-portable")
			reportRatio(b, base, bench.FigP50, "p50-x-portable")
		}
	}
}

func reportRatio(b *testing.B, base bench.Baseline, f bench.Figure, unit string) {
	if v, ok := base.Ratios[f]; ok {
		b.ReportMetric(v, unit)
	}
}
