//go:build linux

package vfs

import (
	"fmt"
	"os"
	"path/filepath"
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
// system calls on the same file, and times the two apart. ns/op is the
// path's, raw-ns/op the baseline's from the same loop, and x-raw their
// ratio (below 1: faster than raw). The raw row pairs raw with itself: its
// x-raw shows the noise of the method. ring/bench_test.go has the same
// rows one layer down.
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
)

// BenchmarkOSWriteAt: File.WriteAt into the page cache of a prezeroed
// file (the committer under FsyncNone and FsyncPeriodic).
func BenchmarkOSWriteAt(b *testing.B) {
	for _, size := range []int{4 << 10, 64 << 10} {
		for _, path := range benchPaths {
			b.Run(fmt.Sprintf("%dKiB/%s", size>>10, path), func(b *testing.B) {
				f := benchFile(b, path, cacheRegionBytes)
				benchPaired(b, f, size, cacheRegionBytes, nil, func(w File, buf []byte, off int64) error {
					_, err := w.WriteAt(buf, off)
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
			for _, path := range benchPaths {
				b.Run(fmt.Sprintf("%dKiB/%s/%s", size>>10, kind, path), func(b *testing.B) {
					f, region, wrap := syncBenchFile(b, path, kind)
					benchPaired(b, f, size, region, wrap, func(w File, buf []byte, off int64) error {
						_, err := w.WriteAtSync(buf, off)
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
			f := benchFile(b, path, syncRegionBytes)
			fd := rawOf(f).fd
			benchPaired(b, f, 4<<10, syncRegionBytes, nil, func(w File, buf []byte, off int64) error {
				if _, err := unix.Pwrite(fd, buf, off); err != nil {
					return err
				}
				return w.Sync()
			})
		})
	}
}

// BenchmarkOSReadAt: File.ReadAt of 4 KiB in the page cache (readers of
// recent records).
func BenchmarkOSReadAt(b *testing.B) {
	for _, path := range benchPaths {
		b.Run("4KiB/"+path, func(b *testing.B) {
			f := benchFile(b, path, syncRegionBytes)
			benchPaired(b, f, 4<<10, syncRegionBytes, nil, func(w File, buf []byte, off int64) error {
				_, err := w.ReadAt(buf, off%(256<<10))
				return err
			})
		})
	}
}

// BenchmarkOSGroupCommit: callers goroutines each WriteAtSync a 1 KiB
// record of their own on one prezeroed file, paired by phase with the same
// through raw system calls. 1/ns/op is records made durable per second.
func BenchmarkOSGroupCommit(b *testing.B) {
	for _, callers := range []int{1, 8, 64} {
		for _, path := range benchPaths {
			b.Run(fmt.Sprintf("%dcallers/%s", callers, path), func(b *testing.B) {
				benchGroup(b, benchFile(b, path, groupRegionRecords*groupRecordBytes), callers)
			})
		}
	}
}

// rawFile is File's data calls as plain system calls on the descriptor of
// an osFile, the baseline of every row.
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

// rawOf is the raw baseline for f: f itself when f is one.
func rawOf(f File) rawFile {
	if r, ok := f.(rawFile); ok {
		return r
	}
	return rawFile{File: f, fd: f.(*osFile).fd}
}

// benchPaired runs op on f and on the raw file under it in alternating
// blocks, the i-th operation at (i*size) mod region, calling wrap (when
// not nil) outside the timing each time the offsets wrap.
func benchPaired(b *testing.B, f File, size, region int, wrap func() error, op func(w File, buf []byte, off int64) error) {
	files := [2]File{f, rawOf(f)}
	buf := make([]byte, size)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	slots := int64(region / size)
	var timed [2]time.Duration
	var i int64
	b.ReportAllocs()
	b.ResetTimer()
	for iter := 0; b.Loop(); iter++ {
		for k := range 2 {
			which := (k + iter) % 2
			if wrap != nil && i%slots == 0 && i > 0 {
				if err := wrap(); err != nil {
					b.Fatal(err)
				}
			}
			start := time.Now()
			for range benchBlockOps {
				if err := op(files[which], buf, (i%slots)*int64(size)); err != nil {
					b.Fatal(err)
				}
				i++
			}
			timed[which] += time.Since(start)
		}
	}
	reportPaired(b, timed[0], timed[1], b.N*benchBlockOps)
}

func reportPaired(b *testing.B, path, raw time.Duration, ops int) {
	b.ReportMetric(float64(path.Nanoseconds())/float64(ops), "ns/op")
	b.ReportMetric(float64(raw.Nanoseconds())/float64(ops), "raw-ns/op")
	b.ReportMetric(float64(path)/float64(raw), "x-raw")
}

func benchGroup(b *testing.B, f File, callers int) {
	files := [2]File{f, rawOf(f)}
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

func groupCaller(files [2]File, c, callers int, start <-chan int, done chan<- error) {
	rec := make([]byte, groupRecordBytes)
	for i := range rec {
		rec[i] = byte(c + i)
	}
	k := int64(0)
	for which := range start {
		var err error
		for range groupOpsPerPhase {
			slot := (int64(c) + k*int64(callers)) % groupRegionRecords
			k++
			if _, err = files[which].WriteAtSync(rec, slot*groupRecordBytes); err != nil {
				break
			}
		}
		done <- err
	}
}

// benchFile is a prezeroed, synced file of n bytes opened through NewOS
// over path's driver, or for the raw row a rawFile.
func benchFile(b *testing.B, path string, n int) File {
	f := openBenchFile(b, path)
	r := rawOf(f)
	if _, err := unix.Pwrite(r.fd, make([]byte, n), 0); err != nil {
		b.Fatal(err)
	}
	if err := unix.Fdatasync(r.fd); err != nil {
		b.Fatal(err)
	}
	return f
}

// syncBenchFile is a prezeroed file, or an empty one that grows to
// growCapBytes and is then cut back to empty (and that synced) by wrap.
func syncBenchFile(b *testing.B, path, kind string) (File, int, func() error) {
	if kind != "growing" {
		return benchFile(b, path, syncRegionBytes), syncRegionBytes, nil
	}
	f := openBenchFile(b, path)
	fd := rawOf(f).fd
	return f, growCapBytes, func() error {
		if err := unix.Ftruncate(fd, 0); err != nil {
			return err
		}
		return unix.Fdatasync(fd)
	}
}

// openBenchFile creates a file through NewOS over path's driver (the
// portable driver for the raw row, which keeps only the descriptor).
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
		return rawOf(f)
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
