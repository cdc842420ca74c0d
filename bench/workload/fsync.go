package workload

import (
	"context"
	"errors"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/bench/disk"
	"github.com/felixbroker/felix/ring"
)

// FsyncWriters are the writer counts of the group-commit ceiling.
var FsyncWriters = []int{1, 16, 64}

// Fsync measures the disk's own limits in dir (bench/disk's suite): the
// fdatasync latency of s.RecordBytes writes on a growing and a prezeroed
// file, the group-commit ceiling at each of writers (FsyncWriters when
// empty), and the page cache's bandwidth (rewriting cached pages,
// appending fresh ones, appending fresh ones kept); each bare, then through the
// io_uring driver (where the kernel allows it) and the portable one with
// the bare figures beside it. Each part runs for s.Duration (or s.Count
// rounds).
func Fsync(ctx context.Context, dir string, s Spec, writers []int) ([]bench.Result, error) {
	s, err := s.WithDefaults()
	if err != nil {
		return nil, err
	}
	if len(writers) == 0 {
		writers = FsyncWriters
	}
	drivers, err := openDrivers()
	if err != nil {
		return nil, err
	}
	defer closeDrivers(drivers)
	suite := disk.Suite{
		Dir:          dir,
		Sync:         disk.SyncOptions{RecordBytes: s.RecordBytes, Count: s.Count, Duration: s.Duration},
		Group:        disk.GroupOptions{RecordBytes: s.RecordBytes, Records: s.Count, Duration: s.Duration},
		PageCache:    disk.PageCacheOptions{Duration: s.Duration, TotalBytes: s.Count * int64(s.RecordBytes)},
		GroupWriters: writers,
		Drivers:      drivers,
		Progress:     s.Progress,
	}
	return disk.RunSuite(ctx, suite)
}

// openDrivers opens the io_uring driver when the kernel allows it, and
// the portable one always.
func openDrivers() ([]ring.Driver, error) {
	var drivers []ring.Driver
	if d, err := ring.Open(ring.Config{Mode: ring.ModeUring}); err == nil {
		drivers = append(drivers, d)
	} else if !errors.Is(err, ring.ErrUnavailable) {
		return nil, err
	}
	d, err := ring.Open(ring.Config{Mode: ring.ModePortable})
	if err != nil {
		closeDrivers(drivers)
		return nil, err
	}
	return append(drivers, d), nil
}

func closeDrivers(ds []ring.Driver) {
	for _, d := range ds {
		d.Close()
	}
}
