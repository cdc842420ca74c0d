package shardlog

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/felixbroker/felix/segment/vfs"
)

// A crash test runs a workload over a MemFS armed to crash after its n-th
// mutation, for every n, then opens the crash image and checks it.

// crashConfig describes one sweep.
type crashConfig struct {
	mode    FsyncMode
	prepare bool
	writers int
	records int // per writer
	tears   []vfs.CrashMode
}

// appended records what the workload appended: offset -> payload, and
// which of them were acknowledged before the crash.
type appended struct {
	mu      sync.Mutex
	payload map[int64][]byte
	acked   map[int64]bool
}

func (a *appended) note(first int64, batch [][]byte, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, p := range batch {
		a.payload[first+int64(i)] = p
		if ok {
			a.acked[first+int64(i)] = true
		}
	}
}

// runWorkload appends from cfg.writers goroutines until done or the FS
// crashes. Batches are 1 to 4 records so flushes and rollovers fall at
// varied places.
func runWorkload(l *Log, cfg crashConfig) *appended {
	a := &appended{payload: map[int64][]byte{}, acked: map[int64]bool{}}
	var wg sync.WaitGroup
	for w := range cfg.writers {
		wg.Go(func() {
			for i := 0; i < cfg.records; {
				n := 1 + (i+w)%4
				batch := make([][]byte, n)
				entries := make([]Entry, n)
				for j := range batch {
					batch[j] = fmt.Appendf(nil, "w%d-r%d-%s", w, i+j, strings.Repeat("x", (i*7+j*13)%90))
					entries[j] = Entry{Key: []byte{byte(w)}, Value: batch[j], Timestamp: int64(i + 1)}
				}
				cw := &chanWaiter{ch: make(chan error, 1)}
				first, err := l.Append(entries, 1, cw)
				if err != nil {
					return // refused: no offsets were given
				}
				err = <-cw.ch
				a.note(first, batch, err == nil)
				if err != nil {
					return
				}
				i += n
			}
		})
	}
	wg.Wait()
	return a
}

// crashOnce runs the workload with a crash after mutation n and returns
// what was appended, the crash image, and whether the crash happened.
func crashOnce(t *testing.T, cfg crashConfig, n int, mode vfs.CrashMode) (*appended, *vfs.MemFS, bool) {
	t.Helper()
	mem := vfs.NewMem()
	o := testOptions(mem, cfg.mode)
	o.PrepareSegments = cfg.prepare
	l := mustOpen(t, o)
	mem.SetCrashAfter(n, mode)
	a := runWorkload(l, cfg)
	crashed := mem.Crashed()
	l.Close() // errors expected after a crash: the process is dead
	if !crashed {
		return a, mem, false
	}
	return a, mem.CrashImage(), true
}

// checkRecovered opens the image and checks the contract: it opens, it is a
// gapless prefix of what was appended with every byte right, it holds every
// record acknowledged under OnCommit, and opening it again changes nothing.
func checkRecovered(t *testing.T, cfg crashConfig, img *vfs.MemFS, a *appended, what string) {
	t.Helper()
	o := testOptions(img, cfg.mode)
	o.PrepareSegments = cfg.prepare
	l, err := Open(o)
	if err != nil {
		t.Fatalf("%s: the crash image does not open: %v", what, err)
	}
	recs := readAll(t, l)
	end := l.End()
	l.Close()
	for i, r := range recs {
		want, ok := a.payload[r.Offset]
		if r.Offset != int64(i) || !ok || !bytes.Equal(r.Value, want) {
			t.Fatalf("%s: record %d is offset %d value %q; appended %q", what, i, r.Offset, r.Value, want)
		}
	}
	if cfg.mode.Kind == FsyncOnCommit {
		for off := range a.acked {
			if off >= end {
				t.Fatalf("%s: acknowledged record %d lost (log ends at %d)", what, off, end)
			}
		}
	}
	l2, err := Open(o)
	if err != nil {
		t.Fatalf("%s: second open: %v", what, err)
	}
	defer l2.Close()
	if r := l2.Recovery(); l2.End() != end || r.TornBytes != 0 || len(r.RemovedFiles) != 0 {
		t.Fatalf("%s: reopen not idempotent: end %d -> %d, recovery %+v", what, end, l2.End(), r)
	}
}

// soak reports whether the long runs were asked for (make soak).
func soak() bool { return os.Getenv("FELIX_SOAK") != "" }

// soaked scales a workload up for make soak: more writers and records, and
// a tear at every byte of a record's header and trailer besides.
func soaked(cfg crashConfig) crashConfig {
	if !soak() {
		return cfg
	}
	cfg.writers++
	cfg.records *= 3
	for k := 1; k <= 48; k++ {
		cfg.tears = append(cfg.tears, vfs.TearLastWrite(k))
	}
	return cfg
}

// sweep crashes the workload after every mutation it makes, in every mode.
func sweep(t *testing.T, cfg crashConfig) {
	cfg = soaked(cfg)
	mem := vfs.NewMem()
	o := testOptions(mem, cfg.mode)
	o.PrepareSegments = cfg.prepare
	l := mustOpen(t, o)
	before := mem.MutationCount()
	runWorkload(l, cfg)
	l.Close()
	total := mem.MutationCount() - before
	step := 1
	if testing.Short() && !soak() {
		step = 3
	}
	modes := append([]vfs.CrashMode{vfs.DropUnsynced}, cfg.tears...)
	for n := 1; n <= total+2; n += step {
		for _, mode := range modes {
			a, img, crashed := crashOnce(t, cfg, n, mode)
			if !crashed {
				continue
			}
			checkRecovered(t, cfg, img, a, fmt.Sprintf("crash after mutation %d (%v)", n, mode))
		}
	}
}
