package workload

import (
	"context"
	"strconv"
	"sync"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/bench/disk"
	"github.com/felixbroker/felix/engine/shardlog"
)

// Baselines remembers the raw limits measured in one run, so that the
// workloads of a matrix that share a shape share its baseline rather than
// measuring it again. A nil *Baselines measures every time. Safe for
// concurrent use.
type Baselines struct {
	mu   sync.Mutex
	seen map[string]bench.Result
}

// NewBaselines returns an empty memory.
func NewBaselines() *Baselines { return &Baselines{seen: map[string]bench.Result{}} }

// get returns the result remembered under key, or measures and remembers it.
func (b *Baselines) get(key string, measure func() (bench.Result, error)) (bench.Result, error) {
	if b == nil {
		return measure()
	}
	b.mu.Lock()
	r, ok := b.seen[key]
	b.mu.Unlock()
	if ok {
		return r, nil
	}
	r, err := measure()
	if err != nil {
		return r, err
	}
	b.mu.Lock()
	b.seen[key] = r
	b.mu.Unlock()
	return r, nil
}

// Limits on the group-commit baseline's file: writers x write bytes.
const groupFileBytesMax = 256 << 20

// diskBaseline is the raw limit of s's durability in dir: under OnCommit
// the group-commit ceiling with one writer per request that can be
// outstanding (writers), each write one request's records; under None and
// Periodic the page cache's bandwidth. Its records and rates are counted
// in s's records (a write of a batch of 64 is 64 records), so every figure
// compares with the workload's.
func diskBaseline(ctx context.Context, b *Baselines, dir string, s Spec, writers int) (name string, r bench.Result, err error) {
	d := baselineDuration(s)
	if s.Fsync.Kind != shardlog.FsyncOnCommit {
		r, err = b.get("pagecache "+dir, func() (bench.Result, error) {
			return disk.PageCache(ctx, dir, disk.PageCacheOptions{Duration: d, Progress: s.Progress})
		})
		return "pagecache", inRecordsOf(r, s.RecordBytes), err
	}
	writeBytes := s.Batch * (s.RecordBytes + recordOverheadBytes)
	writers = max(1, min(writers, groupFileBytesMax/writeBytes/2, 4096))
	key := "groupcommit " + dir + " " + strconv.Itoa(writers) + "x" + strconv.Itoa(writeBytes)
	r, err = b.get(key, func() (bench.Result, error) {
		return disk.GroupCommit(ctx, dir, disk.GroupOptions{Writers: writers, RecordBytes: writeBytes, Duration: d,
			File: disk.Prezeroed, FileBytes: max(64<<20, int64(2*writers*writeBytes)), Progress: s.Progress})
	})
	return "groupcommit", perRecord(r, s.Batch), err
}

// perRecord counts a result whose writes each carried batch records in
// records: rates times batch; latency (each record of a write waited as
// long as the write) unchanged.
func perRecord(r bench.Result, batch int) bench.Result {
	if batch <= 1 {
		return r
	}
	r.Records *= int64(batch)
	r.RecordsPerSec *= float64(batch)
	if r.Params.Extra == nil {
		r.Params.Extra = map[string]string{}
	} else {
		extra := make(map[string]string, len(r.Params.Extra)+1)
		for k, v := range r.Params.Extra {
			extra[k] = v
		}
		r.Params.Extra = extra
	}
	r.Params.Extra["records_per_write"] = strconv.Itoa(batch)
	return r
}

// inRecordsOf restates a bandwidth result in records of recordBytes: how
// many such records per second the raw path takes. Its latency (of a
// large write) says nothing about one record's and is left out.
func inRecordsOf(r bench.Result, recordBytes int) bench.Result {
	r.Records = r.Bytes / int64(recordBytes)
	r.RecordsPerSec = r.MBPerSec * 1e6 / float64(recordBytes)
	r.Latency = nil
	return r
}
