package shardlog

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/felixbroker/felix/ring"
	"github.com/felixbroker/felix/segment/vfs"
)

// The process-level crash test: a writer process prints each acknowledged
// offset, is killed with SIGKILL after some acknowledgements, and every
// acknowledged record is there when the log is reopened. Several cycles run
// against the same directory, each child appending after the last.

const writerEnv = "FELIX_SHARDLOG_KILL_WRITER"

// killSegmentBytes is small enough that each cycle rolls over several
// times, so a kill finds retired segments still waiting for their seal
// under Periodic.
const killSegmentBytes = 16 << 10

func TestAKilledWriterLosesNoAcknowledgedRecord(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGKILL")
	}
	for _, mode := range []string{"on_commit", "periodic"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			acked := int64(-1)
			cycles := 4
			if soak() {
				cycles = 40
			}
			for cycle := range cycles {
				last := runAndKill(t, dir, mode, 40+cycle*25)
				acked = max(acked, last)
				checkDirAfterKill(t, dir, acked)
			}
		})
	}
}

// runAndKill starts a writer, kills it after n acknowledgements, and returns
// the highest offset it reported acknowledged.
func runAndKill(t *testing.T, dir, mode string, n int) int64 {
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillWriterProcess$", "-test.v=false")
	cmd.Env = append(os.Environ(), writerEnv+"="+dir+"|"+mode)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	last, seen := int64(-1), 0
	for seen < n && sc.Scan() {
		line := sc.Text()
		if off, ok := strings.CutPrefix(line, "acked "); ok {
			v, err := strconv.ParseInt(off, 10, 64)
			if err != nil {
				t.Fatalf("writer said %q", line)
			}
			last = v
			seen++
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if seen < n {
		t.Fatalf("writer stopped after %d acknowledgements", seen)
	}
	return last
}

func checkDirAfterKill(t *testing.T, dir string, acked int64) {
	t.Helper()
	d, err := ring.Open(ring.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	l, err := Open(Options{FS: vfs.NewOS(d), Dir: dir, Fsync: OnCommit(), SegmentBytes: killSegmentBytes})
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer l.Close()
	recs := readAll(t, l)
	if int64(len(recs)) <= acked {
		t.Fatalf("log ends at %d; offset %d was acknowledged", len(recs), acked)
	}
	for i, r := range recs {
		if r.Offset != int64(i) || !bytes.Equal(r.Value, killPayload(r.Offset)) {
			t.Fatalf("record %d: offset %d value %q", i, r.Offset, r.Value)
		}
	}
}

func killPayload(off int64) []byte {
	return fmt.Appendf(nil, "record %d %s", off, strings.Repeat("k", int(off%300)))
}

// TestKillWriterProcess is the child: not a test on its own.
func TestKillWriterProcess(t *testing.T) {
	spec := os.Getenv(writerEnv)
	if spec == "" {
		t.Skip("the child of TestAKilledWriterLosesNoAcknowledgedRecord")
	}
	dir, modeName, _ := strings.Cut(spec, "|")
	mode, err := ParseFsyncMode(modeName)
	if err != nil {
		t.Fatal(err)
	}
	d, err := ring.Open(ring.Config{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := Open(Options{FS: vfs.NewOS(d), Dir: dir, Fsync: mode, SegmentBytes: killSegmentBytes, PrepareSegments: true})
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(os.Stdout)
	for off := l.End(); ; off++ {
		got, err := l.AppendWait([]Entry{{Value: killPayload(off)}}, 1)
		if err != nil || got != off {
			t.Fatalf("append %d: got %d, %v", off, got, err)
		}
		fmt.Fprintf(w, "acked %d\n", off)
		w.Flush()
	}
}
