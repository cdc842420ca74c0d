package shardlog

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/felixbroker/felix/ring"
	"github.com/felixbroker/felix/segment/vfs"
)

// restartGiBEnv sets how many GiB of sealed segments BenchmarkRestart's
// log holds (default restartGiBDefault, which a small VM's disk and page
// cache hold comfortably; the goal is read at 10).
const (
	restartGiBEnv     = "FELIX_BENCH_RESTART_GIB"
	restartGiBDefault = 1
	restartChildEnv   = "FELIX_SHARDLOG_RESTART_CHILD"
	restartValueBytes = 1 << 10
)

// BenchmarkRestart measures a restart after kill -9: a child process opens
// the log, has one append acknowledged and is killed with SIGKILL; then the
// clock runs from Open to the first acknowledged append (Periodic, as the
// broker runs by default, 64 MiB segments). It alternates a log of
// $FELIX_BENCH_RESTART_GIB GiB of sealed segments (1 KiB records, built
// once, its active segment just rolled over) with an empty one (made anew
// each time), in $FELIX_BENCH_DIR, and removes both at the end.
//
// Reported, as medians: ns/op, the restart of the sealed log, and
// recovery-ns/op the part of it Open spent recovering; empty-ns/op and
// empty-recovery-ns/op, the same of the empty log; x-empty, the ratio of
// the restarts (the goal: at most 2 at 10 GiB).
//
// The page cache is warm, as a kill -9 leaves it; after a machine crash
// the open's reads of each sealed segment (its index, header and last
// records) come from the disk.
func BenchmarkRestart(b *testing.B) {
	gib := restartGiB(b)
	fs := restartFS(b)
	root, err := os.MkdirTemp(benchRoot(), "felix-restart-bench-*")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(root) })
	sealed, empty := filepath.Join(root, "sealed"), filepath.Join(root, "empty")
	fillSealed(b, fs, sealed, int64(gib)<<30)
	b.Run(fmt.Sprintf("sealed=%dGiB", gib), func(b *testing.B) {
		var sealedTook, emptyTook restartTimes
		for range b.N {
			if err := os.RemoveAll(empty); err != nil {
				b.Fatal(err)
			}
			emptyTook.add(restartAfterKill(b, fs, empty))
			sealedTook.add(restartAfterKill(b, fs, sealed))
		}
		b.ReportMetric(float64(sealedTook.median(sealedTook.restart)), "ns/op")
		b.ReportMetric(float64(sealedTook.median(sealedTook.recovery)), "recovery-ns/op")
		b.ReportMetric(float64(emptyTook.median(emptyTook.restart)), "empty-ns/op")
		b.ReportMetric(float64(emptyTook.median(emptyTook.recovery)), "empty-recovery-ns/op")
		b.ReportMetric(float64(sealedTook.median(sealedTook.restart))/float64(emptyTook.median(emptyTook.restart)), "x-empty")
	})
}

func restartGiB(b *testing.B) int {
	v := os.Getenv(restartGiBEnv)
	if v == "" {
		return restartGiBDefault
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a whole number of GiB, at least 1", restartGiBEnv, v)
	}
	return n
}

// restartFS is the file system the broker would use: io_uring where the
// kernel allows it.
func restartFS(b *testing.B) vfs.FS {
	d, err := ring.Open(ring.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	return vfs.NewOS(d)
}

func restartOptions(fs vfs.FS, dir string) Options {
	return Options{FS: fs, Dir: dir, Fsync: Periodic(DefaultPeriodicInterval), PrepareSegments: true}
}

// fillSealed writes size bytes of records and stops just after a rollover,
// so the active segment is as small as the empty log's.
func fillSealed(b *testing.B, fs vfs.FS, dir string, size int64) {
	o := restartOptions(fs, dir)
	o.Fsync = None() // nothing to wait for; Close syncs
	l, err := Open(o)
	if err != nil {
		b.Fatal(err)
	}
	batch := make([]Entry, 64)
	for i := range batch {
		batch[i] = Entry{Value: make([]byte, restartValueBytes)}
	}
	for segs := 1; ; {
		if _, err := l.AppendWait(batch, 1); err != nil {
			b.Fatal(err)
		}
		st := l.Stats()
		if st.Segments > segs && st.Bytes >= size {
			break
		}
		segs = st.Segments
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
}

// restartTimes collects restarts: Open to the first acknowledged append,
// and the part of it Open spent recovering. The figures are medians: the
// machines this runs on are shared, and one restart slowed by a neighbour
// should not move them.
type restartTimes struct{ restart, recovery []time.Duration }

func (t *restartTimes) add(restart, recovery time.Duration) {
	t.restart = append(t.restart, restart)
	t.recovery = append(t.recovery, recovery)
}

func (t *restartTimes) median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// restartAfterKill runs a child that opens the log in dir and is killed
// once an append is acknowledged, then times the restart.
func restartAfterKill(b *testing.B, fs vfs.FS, dir string) (restart, recovery time.Duration) {
	killChild(b, dir)
	began := time.Now()
	l, err := Open(restartOptions(fs, dir))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := l.AppendWait([]Entry{{Value: make([]byte, restartValueBytes)}}, 1); err != nil {
		b.Fatal(err)
	}
	restart, recovery = time.Since(began), l.Recovery().Took
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	return restart, recovery
}

func killChild(b *testing.B, dir string) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestRestartBenchChild$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), restartChildEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	ready := false
	for !ready && sc.Scan() {
		ready = sc.Text() == "ready"
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if !ready {
		b.Fatalf("the child never had an append acknowledged in %s", dir)
	}
}

// TestRestartBenchChild is BenchmarkRestart's child: not a test on its own.
func TestRestartBenchChild(t *testing.T) {
	dir := os.Getenv(restartChildEnv)
	if dir == "" {
		t.Skip("the child of BenchmarkRestart")
	}
	d, err := ring.Open(ring.Config{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := Open(restartOptions(vfs.NewOS(d), dir))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendWait([]Entry{{Value: make([]byte, restartValueBytes)}}, 1); err != nil {
		t.Fatal(err)
	}
	fmt.Println("ready")
	select {} // until killed
}
