package disk

import (
	"context"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/ring"
)

// Fdatasync measures the latency of one write of o.RecordBytes followed by
// fdatasync, one at a time, straight through the system calls: the disk's
// own floor for a durable append. dir must be on the disk under test (not
// a tmpfs /tmp). The result is a RoleBaseline named
// "fdatasync/<growing|prezeroed>/raw".
func Fdatasync(ctx context.Context, dir string, o SyncOptions) (bench.Result, error) {
	return syncLoop(ctx, dir, o, nil)
}

// RingFdatasync is Fdatasync through d: each round one Submit of a write
// linked to an fdatasync (ring.WriteAtSync). The result is a RoleWorkload
// named "fdatasync/<file>/<driver kind>"; set the Fdatasync result beside
// it with AddBaseline.
func RingFdatasync(ctx context.Context, dir string, d ring.Driver, o SyncOptions) (bench.Result, error) {
	return syncLoop(ctx, dir, o, d)
}

func syncLoop(ctx context.Context, dir string, o SyncOptions, d ring.Driver) (bench.Result, error) {
	o, err := o.withDefaults()
	if err != nil {
		return bench.Result{}, err
	}
	file, err := openDataFile(dir, o.File, o.FileBytes)
	if err != nil {
		return bench.Result{}, err
	}
	defer file.close()
	s := syncerFor(d, file)
	record := pattern(make([]byte, o.RecordBytes))
	op := func(int) (int64, int64, error) {
		off, err := file.next(len(record))
		if err != nil {
			return 0, 0, err
		}
		if err := s.writeSync(record, off); err != nil {
			return 0, 0, err
		}
		return 1, int64(len(record)), nil
	}
	name := "fdatasync/" + o.File.String() + "/" + s.path()
	p := bench.Params{RecordBytes: o.RecordBytes, Writers: 1, Fsync: "fdatasync", IOPath: s.path(),
		Extra: map[string]string{"file": o.File.String()}}
	load := bench.Load{Workers: 1, Ops: o.Count, Duration: o.Duration}
	return measure(ctx, name, roleOf(s), p, dir, load, o.Progress, op)
}

func syncerFor(d ring.Driver, file *dataFile) syncer {
	if d == nil {
		return rawSyncer{file: file}
	}
	return newRingSyncer(d, file)
}
