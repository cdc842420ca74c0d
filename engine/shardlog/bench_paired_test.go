package shardlog

import (
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/segment/vfs"
)

// pairedRow is one row of BenchmarkAppend that BenchmarkUringVsPortable
// measures on both IO paths in turn.
type pairedRow struct {
	mode       FsyncMode
	rec, batch int
	sh         benchShape
}

func (r pairedRow) name() string {
	return "fsync=" + r.mode.String() + "/rec=" + strconv.Itoa(r.rec) + "/batch=" + strconv.Itoa(r.batch) +
		"/appenders=" + strconv.Itoa(r.sh.appenders) + "/window=" + strconv.Itoa(r.sh.window)
}

// pairedRows are the rows where single full runs of BenchmarkAppend have
// had io_uring below portable.
var pairedRows = []pairedRow{
	{OnCommit(), 128, 16, benchShape{1, 1}},
	{OnCommit(), 128, 1, benchShape{1, 1}},
	{OnCommit(), 128, 1, benchShape{1, benchWindow}},
	{OnCommit(), 128, 16, benchShape{64, 1}},
	{OnCommit(), 1024, 1, benchShape{64, 1}},
	{None(), 128, 16, benchShape{1, benchWindow}},
	{None(), 1024, 1, benchShape{64, 1}},
}

// pairedRunFor is how long each path appends in a round.
const pairedRunFor = 300 * time.Millisecond

// BenchmarkUringVsPortable measures rows of BenchmarkAppend on the portable
// path and on io_uring in turn, one round per iteration: each path appends
// for pairedRunFor into a fresh, settled log, and the order is swapped
// every round, so that both see the same disk. A single full run cannot
// tell the paths apart from the shared disk's moods (two runs of one path
// differ by a third). Give it a count of rounds:
//
//	go test -run '^$' -bench BenchmarkUringVsPortable -benchtime 8x ./engine/shardlog/
//
// Reported, each the median over the rounds: recs/s-x-portable and
// p50-x-portable (io_uring over portable in the same round), and each
// path's records/s and p50; and the lowest and highest round's
// recs/s-x-portable.
func BenchmarkUringVsPortable(b *testing.B) {
	fss := openBenchIOs(b)
	if fss[0] == nil || fss[1] == nil {
		b.Skip("needs both IO paths")
	}
	for _, row := range pairedRows {
		b.Run(row.name(), func(b *testing.B) {
			var rates, p50s [2][]float64
			var rateRatios, p50Ratios []float64
			for round := 0; b.Loop(); round++ {
				var got [2]bench.Result
				for k := range 2 {
					i := (k + round) % 2 // portable first in even rounds
					got[i] = runPaired(b, fss[i], row)
				}
				for i, r := range got {
					rates[i] = append(rates[i], r.RecordsPerSec)
					p50s[i] = append(p50s[i], float64(r.Latency.P50))
				}
				rateRatios = append(rateRatios, got[1].RecordsPerSec/got[0].RecordsPerSec)
				p50Ratios = append(p50Ratios, float64(got[1].Latency.P50)/float64(got[0].Latency.P50))
			}
			b.ReportMetric(median(rateRatios), "recs/s-x-portable")
			b.ReportMetric(slices.Min(rateRatios), "recs/s-x-portable-min")
			b.ReportMetric(slices.Max(rateRatios), "recs/s-x-portable-max")
			b.ReportMetric(median(p50Ratios), "p50-x-portable")
			for i, io := range benchIOs {
				b.ReportMetric(median(rates[i]), "recs/s-"+io.name)
				b.ReportMetric(median(p50s[i]), "p50-ns-"+io.name)
			}
		})
	}
}

// runPaired appends row's batches from row's appenders for pairedRunFor
// into a fresh log on fs, settled first as BenchmarkAppend's are, and
// returns what it saw.
func runPaired(b *testing.B, fs vfs.FS, row pairedRow) bench.Result {
	dir, err := os.MkdirTemp(benchRoot(), "felix-shardlog-paired-*")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	l, err := Open(Options{FS: fs, Dir: dir, Fsync: row.mode, PrepareSegments: true})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	settleBenchLog(b, l)
	value := make([]byte, row.rec)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	recorder := bench.NewRecorder(row.sh.appenders)
	errs := make([]error, row.sh.appenders)
	var wg sync.WaitGroup
	began := time.Now()
	deadline := benchNow() + int64(pairedRunFor)
	for i := range row.sh.appenders {
		a := newBenchAppender(l, value, row.batch, row.sh.window, recorder.Lane(i))
		wg.Go(func() { errs[i] = a.runUntil(deadline) })
	}
	wg.Wait()
	elapsed := time.Since(began)
	for _, err := range errs {
		if err != nil {
			b.Fatalf("append: %v", err)
		}
	}
	records, bytes := recorder.Totals()
	m := bench.Measurement{Started: began, Elapsed: elapsed, Records: records, Bytes: bytes, Latency: recorder.Latency()}
	return bench.NewResult("shardlog/append-paired", bench.RoleWorkload, bench.Params{RecordBytes: row.rec, Batch: row.batch}, m)
}

// median returns the middle of vs, the mean of the two middles of an even
// count.
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
