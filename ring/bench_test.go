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

// Benchmarks: one write+fdatasync per op (the committer's pattern) and
// 64 KiB page-cache writes, for io_uring, portable and a raw
// pwrite+fdatasync loop measured in the same run as the baseline. The file
// is zero-filled and synced first and the writes overwrite it, the way the
// engine writes into prepared segments. Set FELIX_BENCH_DIR to choose the
// disk; otherwise b.TempDir() unless that is tmpfs, then ../.benchdata.

// benchKinds: the raw loop, io_uring sleeping in the kernel at once,
// io_uring polling 100us first (Config.ReapSpin), and portable.
var benchKinds = []string{"raw", "io_uring", "io_uring_spin100us", "portable"}

const (
	syncRegionBytes  = 4 << 20
	cacheRegionBytes = 64 << 20
	cacheWriteBytes  = 64 << 10
)

func BenchmarkWriteFdatasync(b *testing.B) {
	for _, size := range []int{4096, 1024} {
		for _, kind := range benchKinds {
			b.Run(fmt.Sprintf("%dB/%s", size, kind), func(b *testing.B) {
				benchWrites(b, kind, size, syncRegionBytes, true)
			})
		}
	}
}

func BenchmarkPageCacheWrite64KiB(b *testing.B) {
	for _, kind := range benchKinds {
		b.Run(kind, func(b *testing.B) {
			benchWrites(b, kind, cacheWriteBytes, cacheRegionBytes, false)
		})
	}
}

func benchWrites(b *testing.B, kind string, size, region int, durable bool) {
	fd := preparedFile(b, region)
	write := rawWrite(fd, durable)
	if kind != "raw" {
		write = driverWrite(openBenchDriver(b, kind), fd, durable)
	}
	buf := fill(size, 7)
	slots := int64(region / size)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for i := int64(0); b.Loop(); i++ {
		if err := write(buf, (i%slots)*int64(size)); err != nil {
			b.Fatal(err)
		}
	}
}

func rawWrite(fd int, durable bool) func([]byte, int64) error {
	return func(p []byte, off int64) error {
		if _, err := unix.Pwrite(fd, p, off); err != nil {
			return err
		}
		if durable {
			return fdatasync(fd)
		}
		return nil
	}
}

func driverWrite(d Driver, fd int, durable bool) func([]byte, int64) error {
	return func(p []byte, off int64) error {
		var err error
		if durable {
			_, err = WriteAtSync(d, fd, p, off)
		} else {
			_, err = WriteAt(d, fd, p, off)
		}
		return err
	}
}

func openBenchDriver(b *testing.B, kind string) Driver {
	switch kind {
	case "io_uring":
		return openDriver(b, Config{Mode: ModeUring})
	case "io_uring_spin100us":
		return openDriver(b, Config{Mode: ModeUring, ReapSpin: 100 * time.Microsecond})
	}
	return openDriver(b, Config{Mode: ModePortable})
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
