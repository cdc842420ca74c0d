package workload

import (
	"context"
	"fmt"
	"strconv"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/engine/shardlog"
)

// readRecordBytesMax is how much one raw read asks for beyond the record.
const readRecordBytesMax = 256

// rawLogBaselines measures a bare shard log under dir with s's records
// and workers: appends of one record at a time (as the cache's puts) and
// reads of one record at random offsets (as its gets), each for the
// baseline duration. RoleBaseline results named "log/append" and
// "log/read".
func rawLogBaselines(ctx context.Context, dir string, s Spec, params bench.Params) (appendRes, readRes bench.Result, err error) {
	l, driver, cleanup, err := openLog(dir, "rawlog", s)
	if err != nil {
		return appendRes, readRes, err
	}
	defer cleanup()
	load := s.load(s.Publishers)
	load.Duration, load.Ops = baselineDuration(s), 0
	params.IOPath = string(driver.Kind())
	rec := bench.NewRecorder(s.Publishers)
	stop := progress(s, "log/append", rec)
	m, err := bench.RunPipeline(ctx, load, s.Inflight, rec, newAppendPipe(l, s))
	stop()
	if err != nil {
		return appendRes, readRes, err
	}
	appendRes = bench.NewResult("log/append", bench.RoleBaseline, params, m)
	readRes, err = rawReads(ctx, l, s, load, params)
	return appendRes, readRes, err
}

// rawReads reads one record at a time at random offsets of l.
func rawReads(ctx context.Context, l *shardlog.Log, s Spec, load bench.Load, params bench.Params) (bench.Result, error) {
	end := l.End()
	if end == 0 {
		return bench.Result{}, fmt.Errorf("felix/bench/workload: log/read: the append baseline wrote nothing")
	}
	bufs := make([][]byte, s.Publishers)
	rngs := make([]uint64, s.Publishers)
	for w := range rngs {
		rngs[w] = uint64(w)*0x9E3779B97F4A7C15 + 7
		bufs[w] = make([]byte, 0, s.RecordBytes+readRecordBytesMax)
	}
	op := func(w int) (int64, int64, error) {
		from := int64(xorshift(&rngs[w]) % uint64(end))
		if _, _, err := l.Read(from, s.RecordBytes+readRecordBytesMax, bufs[w][:0]); err != nil {
			return 0, 0, err
		}
		return 1, int64(s.RecordBytes), nil
	}
	rec := bench.NewRecorder(s.Publishers)
	stop := progress(s, "log/read", rec)
	defer stop()
	load.Rate = s.Rate
	m, err := bench.Run(ctx, load, rec, op)
	if err != nil {
		return bench.Result{}, err
	}
	params = withExtra(params, "records", strconv.FormatInt(end, 10))
	return bench.NewResult("log/read", bench.RoleBaseline, params, m), nil
}
