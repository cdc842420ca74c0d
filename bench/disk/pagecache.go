package disk

import (
	"context"
	"os"

	"github.com/felixbroker/felix/bench"
)

// PageCache measures how fast writes land in the page cache: o.WriteBytes
// per pwrite, never synced, round and round a file of o.FileBytes (small
// enough to stay in memory, so writeback does not throttle it). The
// ceiling for any fsync=none workload. A RoleBaseline named "pagecache/raw".
func PageCache(ctx context.Context, dir string, o PageCacheOptions) (bench.Result, error) {
	o, err := o.withDefaults()
	if err != nil {
		return bench.Result{}, err
	}
	file, err := openDataFile(dir, Prezeroed, o.FileBytes)
	if err != nil {
		return bench.Result{}, err
	}
	defer file.close()
	return pageWrites(ctx, "pagecache", nil, dir, o, file.next, func() *os.File { return file.f })
}

// pageWrites measures o's pwrites of o.WriteBytes, never synced, at the
// offsets next gives in the file current returns (which next may
// replace): the loop PageCache and PageAppend share. A RoleBaseline named
// name+"/raw".
func pageWrites(ctx context.Context, name string, extra map[string]string, dir string, o PageCacheOptions,
	next func(n int) (int64, error), current func() *os.File) (bench.Result, error) {
	chunk := pattern(make([]byte, o.WriteBytes))
	op := func(int) (int64, int64, error) {
		off, err := next(len(chunk))
		if err != nil {
			return 0, 0, err
		}
		if err := writeAt(current(), chunk, off); err != nil {
			return 0, 0, err
		}
		return 1, int64(len(chunk)), nil
	}
	var writes int64
	if o.TotalBytes > 0 {
		writes = max(1, o.TotalBytes/int64(o.WriteBytes))
	}
	p := bench.Params{RecordBytes: o.WriteBytes, Writers: 1, Fsync: "none", IOPath: PathRaw, Extra: extra}
	load := bench.Load{Workers: 1, Ops: writes, Duration: o.Duration}
	return measure(ctx, name+"/"+PathRaw, bench.RoleBaseline, p, dir, load, o.Progress, op)
}
