//go:build unix

package ring

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Benchmarks of every waiting operation the storage engine performs, each
// for three paths: raw system calls on the benchmark's goroutine (the
// baseline), the portable driver and the io_uring driver, the last two
// through the package's helpers (WriteAt, ReadAt, Fdatasync, WriteAtSync)
// as segment/vfs calls them.
//
// Every row is paired: the timed loop alternates a block of the operation
// through the path under test with a block of the same operation as raw
// system calls, on the same file, and times the two apart. ns/op is the
// path's, raw-ns/op the baseline's from the same loop, and x-raw their
// ratio (below 1: faster than raw). On a shared VM the disk and the
// neighbours move both by 2x within seconds; the ratio moves far less. The
// raw row pairs raw with itself: its x-raw shows the noise of the method.
//
// Files live in FELIX_BENCH_DIR when set, else in b.TempDir() unless that
// is a tmpfs (where fdatasync costs nothing), else in ../.benchdata.

// benchPaths are the rows of each benchmark.
var benchPaths = []string{"raw", "portable", "io_uring"}

const (
	benchBlockOps      = 8        // operations per timed block
	syncRegionBytes    = 4 << 20  // a prezeroed file that durable writes go round
	cacheRegionBytes   = 64 << 20 // a prezeroed file that page-cache writes go round
	growCapBytes       = 16 << 20 // a growing file is cut back to empty here
	readBytes          = 4 << 10
	groupRecordBytes   = 1 << 10 // one caller's record in the group-commit shape
	groupOpsPerPhase   = 16      // WriteAtSyncs per caller per timed phase
	groupRegionRecords = 64 << 10
)

// BenchmarkWriteAt: a page-cache write (no sync) into a prezeroed file, as
// the committer writes under FsyncNone and FsyncPeriodic.
func BenchmarkWriteAt(b *testing.B) {
	for _, size := range []int{4 << 10, 64 << 10} {
		for _, path := range benchPaths {
			b.Run(fmt.Sprintf("%dKiB/%s", size>>10, path), func(b *testing.B) {
				fd := preparedFile(b, cacheRegionBytes)
				benchPaired(b, path, size, cacheRegionBytes, nil, func(w benchIO, buf []byte, off int64) error {
					_, err := w.writeAt(fd, buf, off)
					return err
				})
			})
		}
	}
}

// BenchmarkWriteAtSync: a write made durable (a write linked to an
// fdatasync on the ring), as the committer flushes under FsyncOnCommit, on
// a prezeroed file (the fdatasync flushes data only) and on a growing one
// (every fdatasync also commits the new size and blocks).
func BenchmarkWriteAtSync(b *testing.B) {
	for _, size := range []int{1 << 10, 4 << 10} {
		for _, file := range []string{"prezeroed", "growing"} {
			for _, path := range benchPaths {
				b.Run(fmt.Sprintf("%dKiB/%s/%s", size>>10, file, path), func(b *testing.B) {
					fd, region, wrap := syncFile(b, file)
					benchPaired(b, path, size, region, wrap, func(w benchIO, buf []byte, off int64) error {
						_, err := w.writeAtSync(fd, buf, off)
						return err
					})
				})
			}
		}
	}
}

// BenchmarkSync: an fdatasync of a prezeroed file after one 4 KiB
// page-cache write (made by pwrite on every row, inside the timing), as the
// periodic syncer issues it.
func BenchmarkSync(b *testing.B) {
	for _, path := range benchPaths {
		b.Run(path, func(b *testing.B) {
			fd := preparedFile(b, syncRegionBytes)
			benchPaired(b, path, 4<<10, syncRegionBytes, nil, func(w benchIO, buf []byte, off int64) error {
				if _, err := unix.Pwrite(fd, buf, off); err != nil {
					return err
				}
				return w.fdatasync(fd)
			})
		})
	}
}

// BenchmarkReadAt: a 4 KiB read of a page in the page cache, as readers
// of recent records do.
func BenchmarkReadAt(b *testing.B) {
	for _, path := range benchPaths {
		b.Run(fmt.Sprintf("%dKiB/%s", readBytes>>10, path), func(b *testing.B) {
			fd := preparedFile(b, syncRegionBytes)
			benchPaired(b, path, readBytes, syncRegionBytes, nil, func(w benchIO, buf []byte, off int64) error {
				_, err := w.readAt(fd, buf, off%(256<<10)) // 64 pages, always cached
				return err
			})
		})
	}
}

// BenchmarkGroupCommit: callers goroutines each WriteAtSync a 1 KiB record
// of their own, over and over, on one prezeroed file: the shape of many
// committers (or a pipelined one) flushing at once. Pairing is by phase:
// every caller does groupOpsPerPhase operations through the path, then
// every caller the same through raw system calls. ns/op is wall time per
// record, so 1/ns/op is records made durable per second.
func BenchmarkGroupCommit(b *testing.B) {
	for _, callers := range []int{1, 8, 64} {
		for _, path := range benchPaths {
			b.Run(fmt.Sprintf("%dcallers/%s", callers, path), func(b *testing.B) {
				benchGroup(b, path, callers)
			})
		}
	}
}

// benchIO is one way to do the operations: raw system calls when d is nil,
// else the package's helpers over d.
type benchIO struct{ d Driver }

func (w benchIO) writeAt(fd int, p []byte, off int64) (int, error) {
	if w.d == nil {
		return unix.Pwrite(fd, p, off)
	}
	return WriteAt(w.d, fd, p, off)
}

func (w benchIO) readAt(fd int, p []byte, off int64) (int, error) {
	if w.d == nil {
		return unix.Pread(fd, p, off)
	}
	return ReadAt(w.d, fd, p, off)
}

func (w benchIO) fdatasync(fd int) error {
	if w.d == nil {
		return fdatasync(fd)
	}
	return Fdatasync(w.d, fd)
}

func (w benchIO) writeAtSync(fd int, p []byte, off int64) (int, error) {
	if w.d == nil {
		n, err := unix.Pwrite(fd, p, off)
		if err != nil {
			return n, err
		}
		return n, fdatasync(fd)
	}
	return WriteAtSync(w.d, fd, p, off)
}

// benchPaired runs op through path and through raw system calls in
// alternating blocks of benchBlockOps, the i-th operation at offset
// (i*size) mod region, and reports the two times and their ratio. When
// wrap is not nil it is called, outside the timing, each time the offsets
// wrap (a growing file is cut back to empty there).
func benchPaired(b *testing.B, path string, size, region int, wrap func() error, op func(w benchIO, buf []byte, off int64) error) {
	under, raw := benchIO{d: openBenchDriver(b, path)}, benchIO{}
	buf := fill(size, 7)
	slots := int64(region / size)
	var timed [2]time.Duration // [0] the path, [1] raw
	var i int64
	b.ReportAllocs()
	b.ResetTimer()
	for iter := 0; b.Loop(); iter++ {
		for k := range 2 {
			which := (k + iter) % 2 // alternate which goes first
			w := under
			if which == 1 {
				w = raw
			}
			if wrap != nil && i%slots == 0 && i > 0 {
				if err := wrap(); err != nil {
					b.Fatal(err)
				}
			}
			start := time.Now()
			for range benchBlockOps {
				if err := op(w, buf, (i%slots)*int64(size)); err != nil {
					b.Fatal(err)
				}
				i++
			}
			timed[which] += time.Since(start)
		}
	}
	reportPaired(b, timed[0], timed[1], b.N*benchBlockOps)
}

// reportPaired replaces ns/op (which would mix the two) with the path's
// time per operation, and adds the baseline's and their ratio.
func reportPaired(b *testing.B, path, raw time.Duration, ops int) {
	b.ReportMetric(float64(path.Nanoseconds())/float64(ops), "ns/op")
	b.ReportMetric(float64(raw.Nanoseconds())/float64(ops), "raw-ns/op")
	b.ReportMetric(float64(path)/float64(raw), "x-raw")
}

// benchGroup is BenchmarkGroupCommit for one path and caller count.
func benchGroup(b *testing.B, path string, callers int) {
	benchGroupWith(b, openBenchDriver(b, path), callers)
}

func benchGroupWith(b *testing.B, d Driver, callers int) {
	fd := preparedFile(b, groupRegionRecords*groupRecordBytes)
	ios := [2]benchIO{{d: d}, {}}
	start := make([]chan int, callers)
	done := make(chan error, callers)
	for c := range start {
		start[c] = make(chan int, 1)
		go groupCaller(fd, c, callers, ios, start[c], done)
	}
	defer func() {
		for _, s := range start {
			close(s)
		}
	}()
	var timed [2]time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for iter := 0; b.Loop(); iter++ {
		for k := range 2 {
			which := (k + iter) % 2
			began := time.Now()
			for _, s := range start {
				s <- which
			}
			for range start {
				if err := <-done; err != nil {
					b.Fatal(err)
				}
			}
			timed[which] += time.Since(began)
		}
	}
	reportPaired(b, timed[0], timed[1], b.N*groupOpsPerPhase*callers)
}

// groupCaller is caller c of callers: for each phase it is told which
// benchIO to use, does groupOpsPerPhase WriteAtSyncs of its own record into
// slots of its own, and reports on done.
func groupCaller(fd, c, callers int, ios [2]benchIO, start <-chan int, done chan<- error) {
	rec := fill(groupRecordBytes, byte(c))
	k := int64(0)
	for which := range start {
		var err error
		for range groupOpsPerPhase {
			slot := (int64(c) + k*int64(callers)) % groupRegionRecords
			k++
			if _, err = ios[which].writeAtSync(fd, rec, slot*groupRecordBytes); err != nil {
				break
			}
		}
		done <- err
	}
}

func openBenchDriver(b *testing.B, path string) Driver {
	switch path {
	case "io_uring":
		return openDriver(b, Config{Mode: ModeUring})
	case "portable":
		return openDriver(b, Config{Mode: ModePortable})
	}
	return nil
}

// syncFile is the file a durable-write row writes: a prezeroed one, or an
// empty one that grows to growCapBytes and is then cut back to empty (and
// that synced) by the wrap function.
func syncFile(b *testing.B, kind string) (fd, region int, wrap func() error) {
	if kind != "growing" {
		return preparedFile(b, syncRegionBytes), syncRegionBytes, nil
	}
	_, fd = tempFile(b, benchDir(b))
	return fd, growCapBytes, func() error {
		if err := unix.Ftruncate(fd, 0); err != nil {
			return err
		}
		return fdatasync(fd)
	}
}

// preparedFile is a file of n zero bytes, synced, in the benchmark directory.
func preparedFile(b *testing.B, n int) int {
	f, fd := tempFile(b, benchDir(b))
	if _, err := f.WriteAt(make([]byte, n), 0); err != nil {
		b.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	return fd
}

func benchDir(b *testing.B) string {
	if dir := os.Getenv("FELIX_BENCH_DIR"); dir != "" {
		return mkBenchDir(b, dir)
	}
	dir := b.TempDir()
	if !onTmpfs(dir) {
		return dir
	}
	return mkBenchDir(b, filepath.Join("..", ".benchdata"))
}

func mkBenchDir(b *testing.B, parent string) string {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		b.Fatal(err)
	}
	dir, err := os.MkdirTemp(parent, "ring-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
