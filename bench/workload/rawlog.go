package workload

import (
	"context"
	"fmt"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/engine/shardlog"
)

// readRecordBytesMax is how much one raw read asks for beyond the record.
const readRecordBytesMax = 256

// rawLogBaselines runs the mix of s and c, bounded by the baseline
// duration, on a bare shard log in a fresh directory under dir: a put is
// an append of the same record, waiting for its commit at s.Fsync; a get
// a read of one record at a random offset; the log is first filled with a
// record per key when the mix has gets, as the cache is. RoleBaseline
// results "log/append" and "log/read", by kind.
func rawLogBaselines(ctx context.Context, dir string, s Spec, c CacheShape, params bench.Params) (map[string]bench.Result, error) {
	l, driver, cleanup, err := openLog(dir, "rawlog", s)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	params.IOPath = string(driver.Kind())
	ops := newRawLogCache(l, max(s.Publishers, preloadWorkers(s, c)), s.RecordBytes)
	return mixBaselines(ctx, s, c, ops, true, "log/read", "log/append", params)
}

// rawLogCache is the mix on a bare log; worker w owns its entry, waiter,
// read buffer and random state.
type rawLogCache struct {
	log        *shardlog.Log
	entries    [][]shardlog.Entry
	waiters    []chanWaiter
	bufs       [][]byte
	rngs       []uint64
	readMax    int
	valueBytes int
}

func newRawLogCache(l *shardlog.Log, workers, valueBytes int) *rawLogCache {
	o := &rawLogCache{log: l, readMax: valueBytes + readRecordBytesMax, valueBytes: valueBytes}
	for w := range workers {
		o.entries = append(o.entries, make([]shardlog.Entry, 1))
		o.waiters = append(o.waiters, make(chanWaiter, 1))
		o.bufs = append(o.bufs, make([]byte, 0, o.readMax))
		o.rngs = append(o.rngs, uint64(w)*0x9E3779B97F4A7C15+7)
	}
	return o
}

func (o *rawLogCache) put(w int, key, value []byte) error {
	o.entries[w][0] = shardlog.Entry{Key: key, Value: value}
	if _, err := o.log.Append(o.entries[w], 1, o.waiters[w]); err != nil {
		return err
	}
	return <-o.waiters[w]
}

func (o *rawLogCache) get(w int, _ []byte) (int, bool, error) {
	end := o.log.End()
	if end == 0 {
		return 0, false, fmt.Errorf("felix/bench/workload: log/read: nothing was appended to read")
	}
	buf, _, err := o.log.Read(int64(xorshift(&o.rngs[w])%uint64(end)), o.readMax, o.bufs[w][:0])
	if err != nil {
		return 0, false, err
	}
	o.bufs[w] = buf[:0]
	return o.valueBytes, true, nil // every record holds a value of that size
}
