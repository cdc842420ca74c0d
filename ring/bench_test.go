//go:build unix

package ring

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
// path's mean, raw-ns/op the baseline's from the same loop, and x-raw the
// ratio of the two means (below 1: faster than raw). p50-x-raw is the ratio
// of the median blocks: rare stalls (writeback, a journal commit, a
// neighbour) decide the means but not it. On a shared VM the disk and the
// neighbours move both paths by 2x within seconds; the ratios move far
// less. The raw row pairs raw with itself: its ratios show the noise of
// the method.
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
	readRegionBytes    = 256 << 10 // 64 pages, read round and round: always cached
	groupRecordBytes   = 1 << 10   // one caller's record in the group-commit shape
	groupOpsPerPhase   = 16        // WriteAtSyncs per caller per timed phase
	groupRegionRecords = 64 << 10
	groupRegionBytes   = groupRegionRecords * groupRecordBytes
)

// BenchmarkWriteAt: a page-cache write (no sync) into a prezeroed file, as
// the committer writes under FsyncNone and FsyncPeriodic.
func BenchmarkWriteAt(b *testing.B) {
	for _, size := range []int{4 << 10, 64 << 10} {
		for _, path := range benchPaths {
			b.Run(fmt.Sprintf("%dKiB/%s", size>>10, path), func(b *testing.B) {
				benchPaired(b, path, size, prezeroedUncached(cacheRegionBytes), func(w benchIO, fd int, buf []byte, off int64) error {
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
		for _, kind := range []string{"prezeroed", "growing"} {
			file := prezeroed(syncRegionBytes)
			if kind == "growing" {
				file = growing
			}
			for _, path := range benchPaths {
				b.Run(fmt.Sprintf("%dKiB/%s/%s", size>>10, kind, path), func(b *testing.B) {
					benchPaired(b, path, size, file, func(w benchIO, fd int, buf []byte, off int64) error {
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
			benchPaired(b, path, 4<<10, prezeroed(syncRegionBytes), func(w benchIO, fd int, buf []byte, off int64) error {
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
			benchPaired(b, path, readBytes, prezeroed(readRegionBytes), func(w benchIO, fd int, buf []byte, off int64) error {
				_, err := w.readAt(fd, buf, off)
				return err
			})
		})
	}
}

// BenchmarkGroupCommit: callers goroutines each WriteAtSync a 1 KiB record
// of their own, over and over, on one prezeroed file: the shape of many
// committers (or a pipelined one) flushing at once. Pairing is by phase:
// every caller does groupOpsPerPhase operations through the path, then
// every caller the same through raw system calls (on a file of its own).
// ns/op is wall time per record, so 1/ns/op is records made durable per
// second.
func BenchmarkGroupCommit(b *testing.B) {
	for _, callers := range []int{1, 2, 4, 8, 64} {
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

// benchFile makes a file in the benchmark directory for a row: its
// descriptor, its region (offsets go round it), and what to do, outside
// the timing, each time they wrap (nil: nothing).
type benchFile func(b *testing.B) (fd, region int, wrap func() error)

// prezeroed is a file of n zero bytes, synced.
func prezeroed(n int) benchFile {
	return func(b *testing.B) (int, int, func() error) { return preparedFile(b, n), n, nil }
}

// prezeroedUncached is prezeroed, then dropped from the page cache: the
// benchmark's own writes bring its pages back in the same way for every
// path. (Two files prepared alike with one 64 MiB write each can differ by
// 20% in what a page-cache write into them costs, for as long as those
// pages stay cached; the page-cache write rows would measure that.)
func prezeroedUncached(n int) benchFile {
	return func(b *testing.B) (int, int, func() error) {
		fd := preparedFile(b, n)
		dropCache(fd, n)
		return fd, n, nil
	}
}

// growing is an empty file that grows to growCapBytes and is then cut back
// to empty, and that synced, so the next writes grow it again.
func growing(b *testing.B) (int, int, func() error) {
	_, fd := tempFile(b, benchDir(b))
	return fd, growCapBytes, func() error {
		if err := unix.Ftruncate(fd, 0); err != nil {
			return err
		}
		return fdatasync(fd)
	}
}

// benchPaired runs op through path and through raw system calls in
// alternating blocks of benchBlockOps, each on a file of its own made by
// file (so that both meet the same offsets in the same order: page-cache
// costs repeat with the offset), the i-th operation of each at
// (i*size) mod region, and reports the two times and their ratios.
func benchPaired(b *testing.B, path string, size int, file benchFile, op func(w benchIO, fd int, buf []byte, off int64) error) {
	ios := [2]benchIO{{d: openBenchDriver(b, path)}, {}}
	var fds [2]int
	var wraps [2]func() error
	var region int
	for k := range ios {
		fds[k], region, wraps[k] = file(b)
	}
	buf := fill(size, 7)
	slots := int64(region / size)
	timed := newPairTimes()
	var next [2]int64
	b.ReportAllocs()
	b.ResetTimer()
	for iter := 0; b.Loop(); iter++ {
		for k := range 2 {
			which := (k + iter) % 2 // alternate which goes first
			i := next[which]
			if wraps[which] != nil && i%slots == 0 && i > 0 {
				if err := wraps[which](); err != nil {
					b.Fatal(err)
				}
			}
			start := time.Now()
			for j := range int64(benchBlockOps) {
				if err := op(ios[which], fds[which], buf, ((i+j)%slots)*int64(size)); err != nil {
					b.Fatal(err)
				}
			}
			timed[which].add(time.Since(start))
			next[which] = i + benchBlockOps
		}
	}
	timed.report(b, benchBlockOps)
}

// blockTimes keeps the total of a path's timed blocks and the most recent
// blockTimesKept of them, in memory taken before the timing starts.
type blockTimes struct {
	total time.Duration
	n     int
	kept  []time.Duration
}

const blockTimesKept = 1 << 15

// pairTimes is [0] the path under test, [1] raw.
type pairTimes [2]blockTimes

func newPairTimes() *pairTimes {
	return &pairTimes{{kept: make([]time.Duration, blockTimesKept)}, {kept: make([]time.Duration, blockTimesKept)}}
}

func (t *blockTimes) add(d time.Duration) {
	t.total += d
	t.kept[t.n%len(t.kept)] = d
	t.n++
}

func (t *blockTimes) median() time.Duration {
	kept := slices.Clone(t.kept[:min(t.n, len(t.kept))])
	slices.Sort(kept)
	return kept[len(kept)/2]
}

// report replaces ns/op (which would mix the two paths) with the path's
// mean time per operation, and adds the baseline's, the ratio of the
// means and the ratio of the median blocks. opsPerBlock is how many
// operations each timed block did.
func (t *pairTimes) report(b *testing.B, opsPerBlock int) {
	path, raw := &t[0], &t[1]
	b.ReportMetric(float64(path.total.Nanoseconds())/float64(path.n*opsPerBlock), "ns/op")
	b.ReportMetric(float64(raw.total.Nanoseconds())/float64(raw.n*opsPerBlock), "raw-ns/op")
	b.ReportMetric(float64(path.total)/float64(raw.total), "x-raw")
	b.ReportMetric(float64(path.median())/float64(raw.median()), "p50-x-raw")
}

// benchGroup is BenchmarkGroupCommit for one path and caller count.
func benchGroup(b *testing.B, path string, callers int) {
	benchGroupWith(b, openBenchDriver(b, path), callers)
}

func benchGroupWith(b *testing.B, d Driver, callers int) {
	ios := [2]benchIO{{d: d}, {}}
	fds := [2]int{preparedFile(b, groupRegionBytes), preparedFile(b, groupRegionBytes)}
	start := make([]chan int, callers)
	done := make(chan error, callers)
	for c := range start {
		start[c] = make(chan int, 1)
		go groupCaller(fds, c, callers, ios, start[c], done)
	}
	defer func() {
		for _, s := range start {
			close(s)
		}
	}()
	timed := newPairTimes()
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
			timed[which].add(time.Since(began))
		}
	}
	timed.report(b, groupOpsPerPhase*callers)
}

// groupCaller is caller c of callers: for each phase it is told which
// path to use, does groupOpsPerPhase WriteAtSyncs of its own record into
// slots of its own in that path's file, and reports on done.
func groupCaller(fds [2]int, c, callers int, ios [2]benchIO, start <-chan int, done chan<- error) {
	rec := fill(groupRecordBytes, byte(c))
	var next [2]int64
	for which := range start {
		var err error
		for range groupOpsPerPhase {
			k := next[which]
			next[which]++
			slot := (int64(c) + k*int64(callers)) % groupRegionRecords
			if _, err = ios[which].writeAtSync(fds[which], rec, slot*groupRecordBytes); err != nil {
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
