package shardlog

import (
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/felixbroker/felix/ring"
	"github.com/felixbroker/felix/segment/vfs"
)

// BenchmarkFlushScheduler measures OnCommit appends spread over several
// logs on the real disk (io_uring where the kernel allows it), each log's
// committer flushing alone (sched=off, the baseline) and the same logs
// sharing a FlushScheduler (sched=on), run one after the other:
//
//	BenchmarkFlushScheduler/logs=4/value=256/sched=on
//
// 32 appenders in all, each bound to one log (appender i to log i%logs),
// each waiting for its ack before the next append (the cache's put
// clients). Reported: records/s, the process's CPU time per append
// (user+system, getrusage: the io_uring workers' included), fdatasyncs
// per append, p50/p99 ack latency, and for sched=on the ratios to the
// sched=off row run just before it (recs/s-x-perlog, cpu-x-perlog: below
// 1 is less CPU).
func BenchmarkFlushScheduler(b *testing.B) {
	d, err := ring.Open(ring.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	b.Logf("io path: %v", d.Kind())
	fs := vfs.NewOS(d)
	for _, logs := range []int{1, 4} {
		for _, size := range []int{0, 256, 4096} {
			var off schedResult
			for _, on := range []bool{false, true} {
				name := "logs=" + strconv.Itoa(logs) + "/value=" + strconv.Itoa(size) + "/sched=" + map[bool]string{false: "off", true: "on"}[on]
				b.Run(name, func(b *testing.B) {
					r := runSchedBench(b, fs, logs, size, on)
					r.report(b)
					if on {
						b.ReportMetric(r.recsPerSec()/off.recsPerSec(), "recs/s-x-perlog")
						b.ReportMetric(r.cpuPerOp()/off.cpuPerOp(), "cpu-x-perlog")
					} else {
						off = r
					}
				})
			}
		}
	}
}

type schedResult struct {
	ops     int
	elapsed time.Duration
	cpu     time.Duration
	syncs   int64
	lat     []time.Duration // every append's, sorted
}

func (r schedResult) recsPerSec() float64 { return float64(r.ops) / r.elapsed.Seconds() }
func (r schedResult) cpuPerOp() float64   { return float64(r.cpu.Microseconds()) / float64(r.ops) }

func (r schedResult) report(b *testing.B) {
	b.ReportMetric(r.recsPerSec(), "recs/s")
	b.ReportMetric(r.cpuPerOp(), "cpu-us/op")
	b.ReportMetric(float64(r.syncs)/float64(r.ops), "syncs/op")
	if len(r.lat) > 0 {
		b.ReportMetric(float64(r.lat[len(r.lat)/2].Microseconds()), "p50-us")
		b.ReportMetric(float64(r.lat[len(r.lat)*99/100].Microseconds()), "p99-us")
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

const schedBenchAppenders = 32

func runSchedBench(b *testing.B, fs vfs.FS, logs, size int, on bool) schedResult {
	root, err := os.MkdirTemp(benchRoot(), "felix-flushsched-bench-*")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(root)
	var sched *FlushScheduler
	if on {
		sched = NewFlushScheduler()
		defer sched.Close()
	}
	ls := make([]*Log, logs)
	for i := range ls {
		l, err := Open(Options{FS: fs, Dir: root + "/" + strconv.Itoa(i), Fsync: OnCommit(), PrepareSegments: true,
			SegmentBytes: benchSegmentBytes(b), FlushScheduler: sched})
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		settleBenchLog(b, l)
		ls[i] = l
	}
	value := make([]byte, size)
	key := []byte("key:0000000000")
	var syncs0 int64
	for _, l := range ls {
		syncs0 += l.Stats().Syncs
	}
	lats := make([][]time.Duration, schedBenchAppenders)
	errs := make([]error, schedBenchAppenders)
	var wg sync.WaitGroup
	b.ResetTimer()
	cpu0, began := processCPU(), time.Now()
	for g := range schedBenchAppenders {
		n := b.N / schedBenchAppenders
		if g < b.N%schedBenchAppenders {
			n++
		}
		lats[g] = make([]time.Duration, 0, n)
		l := ls[g%logs]
		wg.Go(func() {
			entries := []Entry{{Key: key, Value: value}}
			for range n {
				t0 := time.Now()
				if _, err := l.AppendWait(entries, 1); err != nil {
					errs[g] = err
					return
				}
				lats[g] = append(lats[g], time.Since(t0))
			}
		})
	}
	wg.Wait()
	r := schedResult{ops: b.N, elapsed: time.Since(began), cpu: processCPU() - cpu0}
	b.StopTimer()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	for _, l := range ls {
		r.syncs += l.Stats().Syncs
	}
	r.syncs -= syncs0
	for _, l := range lats {
		r.lat = append(r.lat, l...)
	}
	slices.Sort(r.lat)
	return r
}
