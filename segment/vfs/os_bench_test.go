//go:build linux

package vfs

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/felixbroker/felix/ring"
	"golang.org/x/sys/unix"
)

// Benchmarks of the OS FS's data calls, the ones the storage engine makes
// on its hot paths, each for three paths: raw system calls on the
// benchmark's goroutine (the baseline), and NewOS over the portable driver
// and over the io_uring driver.
//
// Every row is paired: the timed loop alternates a block of the call
// through the path under test with a block of the same operation as raw
// system calls on a file of its own made alike, and times the two apart.
// ns/op is the path's mean, raw-ns/op the baseline's from the same loop,
// x-raw the ratio of the means (below 1: faster than raw) and p50-x-raw
// the ratio of the median blocks, which rare stalls do not move. The raw
// row pairs raw with itself: its ratios show the noise of the method.
// ring/bench_test.go has the same rows one layer down, and says more on
// the method.
//
// Files live in FELIX_BENCH_DIR when set, else in b.TempDir() unless that
// is a tmpfs (where fdatasync costs nothing), else in ../../.benchdata.

var benchPaths = []string{"raw", "portable", "io_uring"}

const (
	benchBlockOps      = 8
	syncRegionBytes    = 4 << 20
	cacheRegionBytes   = 64 << 20
	growCapBytes       = 16 << 20
	groupRecordBytes   = 1 << 10
	groupOpsPerPhase   = 16
	groupRegionRecords = 64 << 10
	readRegionBytes    = 256 << 10 // 64 pages, read round and round: always cached
)

// BenchmarkOSWriteAt: File.WriteAt into the page cache of a prezeroed
// file (the committer under FsyncNone and FsyncPeriodic).
func BenchmarkOSWriteAt(b *testing.B) {
	for _, size := range []int{4 << 10, 64 << 10} {
		for _, path := range benchPaths {
			b.Run(fmt.Sprintf("%dKiB/%s", size>>10, path), func(b *testing.B) {
				benchPaired(b, path, size, prezeroed(cacheRegionBytes, true), func(f File, buf []byte, off int64) error {
					_, err := f.WriteAt(buf, off)
					return err
				})
			})
		}
	}
}

// BenchmarkOSWriteAtSync: File.WriteAtSync (the committer under
// FsyncOnCommit) on a prezeroed file and on a growing one.
func BenchmarkOSWriteAtSync(b *testing.B) {
	for _, size := range []int{1 << 10, 4 << 10} {
		for _, kind := range []string{"prezeroed", "growing"} {
			file := prezeroed(syncRegionBytes, false)
			if kind == "growing" {
				file = growing
			}
			for _, path := range benchPaths {
				b.Run(fmt.Sprintf("%dKiB/%s/%s", size>>10, kind, path), func(b *testing.B) {
					benchPaired(b, path, size, file, func(f File, buf []byte, off int64) error {
						_, err := f.WriteAtSync(buf, off)
						return err
					})
				})
			}
		}
	}
}

// BenchmarkOSSync: File.Sync after one 4 KiB page-cache write (made by
// pwrite on every row, inside the timing), as the periodic syncer calls it.
func BenchmarkOSSync(b *testing.B) {
	for _, path := range benchPaths {
		b.Run(path, func(b *testing.B) {
			benchPaired(b, path, 4<<10, prezeroed(syncRegionBytes, false), func(f File, buf []byte, off int64) error {
				if _, err := unix.Pwrite(fdOf(f), buf, off); err != nil {
					return err
				}
				return f.Sync()
			})
		})
	}
}

// BenchmarkOSReadAt: File.ReadAt of 4 KiB in the page cache (readers of
// recent records).
func BenchmarkOSReadAt(b *testing.B) {
	for _, path := range benchPaths {
		b.Run("4KiB/"+path, func(b *testing.B) {
			benchPaired(b, path, 4<<10, prezeroed(readRegionBytes, false), func(f File, buf []byte, off int64) error {
				_, err := f.ReadAt(buf, off)
				return err
			})
		})
	}
}

// BenchmarkOSGroupCommit: callers goroutines each WriteAtSync a 1 KiB
// record of their own on one prezeroed file, paired by phase with the same
// through raw system calls on a file of its own. 1/ns/op is records made
// durable per second.
func BenchmarkOSGroupCommit(b *testing.B) {
	for _, callers := range []int{1, 2, 4, 8, 64} {
		for _, path := range benchPaths {
			b.Run(fmt.Sprintf("%dcallers/%s", callers, path), func(b *testing.B) {
				benchGroup(b, path, callers)
			})
		}
	}
}

// rawFile is File's data calls as plain system calls on a descriptor: the
// baseline of every row. Its other methods are not called.
type rawFile struct {
	File
	fd int
}

func (r rawFile) WriteAt(p []byte, off int64) (int, error) { return unix.Pwrite(r.fd, p, off) }
func (r rawFile) ReadAt(p []byte, off int64) (int, error)  { return unix.Pread(r.fd, p, off) }
func (r rawFile) Sync() error                              { return unix.Fdatasync(r.fd) }

func (r rawFile) WriteAtSync(p []byte, off int64) (int, error) {
	n, err := unix.Pwrite(r.fd, p, off)
	if err != nil {
		return n, err
	}
	return n, unix.Fdatasync(r.fd)
}

// fdOf is the descriptor under a benchmark's File.
func fdOf(f File) int {
	if r, ok := f.(rawFile); ok {
		return r.fd
	}
	return f.(*osFile).fd
}

// benchFile prepares an open file for a row: its region (offsets go round
// it) and what to do, outside the timing, each time they wrap (nil:
// nothing).
type benchFile func(b *testing.B, f File) (region int, wrap func() error)

// prezeroed fills the file with n zero bytes and syncs it; uncached then
// drops it from the page cache, so that the benchmark's own writes bring
// the pages back alike for every path (see ring/bench_test.go).
func prezeroed(n int, uncached bool) benchFile {
	return func(b *testing.B, f File) (int, func() error) {
		fd := fdOf(f)
		if _, err := unix.Pwrite(fd, make([]byte, n), 0); err != nil {
			b.Fatal(err)
		}
		if err := unix.Fdatasync(fd); err != nil {
			b.Fatal(err)
		}
		if uncached {
			_ = unix.Fadvise(fd, 0, int64(n), unix.FADV_DONTNEED)
		}
		return n, nil
	}
}

// growing leaves the file empty to grow to growCapBytes; wrap cuts it back
// to empty, and syncs that, so the next writes grow it again.
func growing(_ *testing.B, f File) (int, func() error) {
	fd := fdOf(f)
	return growCapBytes, func() error {
		if err := unix.Ftruncate(fd, 0); err != nil {
			return err
		}
		return unix.Fdatasync(fd)
	}
}

// benchPaired runs op on path's file and on a raw file of its own in
// alternating blocks of benchBlockOps, the i-th operation of each at
// (i*size) mod region, and reports the times and their ratios.
func benchPaired(b *testing.B, path string, size int, prepare benchFile, op func(f File, buf []byte, off int64) error) {
	files := [2]File{openBenchFile(b, path), openBenchFile(b, "raw")}
	var wraps [2]func() error
	var region int
	for k, f := range files {
		region, wraps[k] = prepare(b, f)
	}
	buf := make([]byte, size)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	slots := int64(region / size)
	timed := newPairTimes()
	var next [2]int64
	b.ReportAllocs()
	b.ResetTimer()
	for iter := 0; b.Loop(); iter++ {
		for k := range 2 {
			which := (k + iter) % 2
			i := next[which]
			if wraps[which] != nil && i%slots == 0 && i > 0 {
				if err := wraps[which](); err != nil {
					b.Fatal(err)
				}
			}
			start := time.Now()
			for j := range int64(benchBlockOps) {
				if err := op(files[which], buf, ((i+j)%slots)*int64(size)); err != nil {
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

// report replaces ns/op with the path's mean time per operation and adds
// the baseline's, the ratio of the means and the ratio of the medians.
func (t *pairTimes) report(b *testing.B, opsPerBlock int) {
	path, raw := &t[0], &t[1]
	b.ReportMetric(float64(path.total.Nanoseconds())/float64(path.n*opsPerBlock), "ns/op")
	b.ReportMetric(float64(raw.total.Nanoseconds())/float64(raw.n*opsPerBlock), "raw-ns/op")
	b.ReportMetric(float64(path.total)/float64(raw.total), "x-raw")
	b.ReportMetric(float64(path.median())/float64(raw.median()), "p50-x-raw")
}

// benchGroup is BenchmarkOSGroupCommit for one path and caller count.
func benchGroup(b *testing.B, path string, callers int) {
	files := [2]File{openBenchFile(b, path), openBenchFile(b, "raw")}
	for _, f := range files {
		prezeroed(groupRegionRecords*groupRecordBytes, false)(b, f)
	}
	start := make([]chan int, callers)
	done := make(chan error, callers)
	for c := range start {
		start[c] = make(chan int, 1)
		go groupCaller(files, c, callers, start[c], done)
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

// groupCaller is caller c of callers: each phase it is told which file to
// use and does groupOpsPerPhase WriteAtSyncs of its own record into slots
// of its own there.
func groupCaller(files [2]File, c, callers int, start <-chan int, done chan<- error) {
	rec := make([]byte, groupRecordBytes)
	for i := range rec {
		rec[i] = byte(c + i)
	}
	var next [2]int64
	for which := range start {
		var err error
		for range groupOpsPerPhase {
			k := next[which]
			next[which]++
			slot := (int64(c) + k*int64(callers)) % groupRegionRecords
			if _, err = files[which].WriteAtSync(rec, slot*groupRecordBytes); err != nil {
				break
			}
		}
		done <- err
	}
}

// openBenchFile creates a file through NewOS over path's driver, or for
// the raw path a rawFile (over an osFile it keeps only for the descriptor).
func openBenchFile(b *testing.B, path string) File {
	mode := ring.ModePortable
	if path == "io_uring" {
		mode = ring.ModeUring
	}
	d, err := ring.Open(ring.Config{Mode: mode})
	if err != nil {
		b.Skipf("driver unavailable here: %v", err)
	}
	b.Cleanup(func() { _ = d.Close() })
	f, err := NewOS(d).Create(filepath.Join(benchDir(b), "data"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = f.Close() })
	if path == "raw" {
		return rawFile{File: f, fd: f.(*osFile).fd}
	}
	return f
}

func benchDir(b *testing.B) string {
	if dir := os.Getenv("FELIX_BENCH_DIR"); dir != "" {
		return mkBenchDir(b, dir)
	}
	dir := b.TempDir()
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil || int64(st.Type) != unix.TMPFS_MAGIC {
		return dir
	}
	return mkBenchDir(b, filepath.Join("..", "..", ".benchdata"))
}

func mkBenchDir(b *testing.B, parent string) string {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		b.Fatal(err)
	}
	dir, err := os.MkdirTemp(parent, "vfs-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
