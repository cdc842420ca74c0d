package shardlog

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/felixbroker/felix/segment/vfs"
	"github.com/felixbroker/felix/segment/vfs/errorfs"
)

// schedDir is the directory of log i of a test's set.
func schedDir(i int) string { return fmt.Sprintf("/data/log-%d", i) }

// openScheduled opens n OnCommit logs on fs sharing s.
func openScheduled(t *testing.T, fs vfs.FS, s *FlushScheduler, n int, prepare bool) []*Log {
	t.Helper()
	ls := make([]*Log, n)
	for i := range ls {
		o := testOptions(fs, OnCommit())
		o.Dir, o.FlushScheduler, o.PrepareSegments = schedDir(i), s, prepare
		ls[i] = mustOpen(t, o)
	}
	return ls
}

// Several logs flushed through one scheduler, crashed after every mutation
// of a workload that rolls each over several times: no log loses a record
// it acknowledged, every log opens as a gapless, byte-exact prefix, so
// each acknowledged only after its own file's sync.
func TestLogsSharingASchedulerLoseNoAcknowledgedRecordInACrash(t *testing.T) {
	for _, prepare := range []bool{false, true} {
		t.Run(fmt.Sprintf("prepare=%v", prepare), func(t *testing.T) {
			cfg := crashConfig{mode: OnCommit(), prepare: prepare, writers: 2, records: 24}
			const logs = 3
			run := func(mem *vfs.MemFS, crashAfter int, mode vfs.CrashMode) []*appended {
				s := NewFlushScheduler()
				defer s.Close()
				ls := openScheduled(t, mem, s, logs, prepare)
				if crashAfter > 0 {
					mem.SetCrashAfter(crashAfter, mode)
				}
				got := make([]*appended, logs)
				var wg sync.WaitGroup
				for i, l := range ls {
					wg.Go(func() { got[i] = runWorkload(l, cfg) })
				}
				wg.Wait()
				for _, l := range ls {
					l.Close()
				}
				return got
			}
			mem := vfs.NewMem()
			before := mem.MutationCount()
			run(mem, 0, vfs.DropUnsynced)
			total := mem.MutationCount() - before
			step := 1
			if testing.Short() {
				step = 4
			}
			for n := 1; n <= total+2; n += step {
				for _, mode := range []vfs.CrashMode{vfs.DropUnsynced, vfs.TearLastWrite(20), vfs.WriteBackSome(1)} {
					mem := vfs.NewMem()
					got := run(mem, n, mode)
					if !mem.Crashed() {
						continue
					}
					img := mem.CrashImage()
					for i := range logs {
						checkRecoveredIn(t, cfg, img, schedDir(i), got[i], fmt.Sprintf("log %d, crash after mutation %d (%v)", i, n, mode))
					}
				}
			}
		})
	}
}

// checkRecoveredIn is checkRecovered for the log in dir.
func checkRecoveredIn(t *testing.T, cfg crashConfig, img *vfs.MemFS, dir string, a *appended, what string) {
	t.Helper()
	o := testOptions(img, cfg.mode)
	o.Dir, o.PrepareSegments = dir, cfg.prepare
	l, err := Open(o)
	if err != nil {
		t.Fatalf("%s: the crash image does not open: %v", what, err)
	}
	defer l.Close()
	recs := readAll(t, l)
	for i, r := range recs {
		want, ok := a.payload[r.Offset]
		if r.Offset != int64(i) || !ok || string(r.Value) != string(want) {
			t.Fatalf("%s: record %d is offset %d value %q; appended %q", what, i, r.Offset, r.Value, want)
		}
	}
	for off := range a.acked {
		if off >= l.End() {
			t.Fatalf("%s: acknowledged record %d lost (log ends at %d)", what, off, l.End())
		}
	}
}

// scheduleTogether puts every log in ls in the scheduler's next round at
// once (a test's stand-in for appends to several logs arriving while a
// round is in flight). Nothing may append meanwhile.
func scheduleTogether(s *FlushScheduler, ls []*Log) {
	s.mu.Lock()
	for _, l := range ls {
		l.mu.Lock()
		if !l.due {
			l.due = true
			s.due = append(s.due, l)
		}
		l.mu.Unlock()
	}
	s.work.Signal()
	s.mu.Unlock()
}

// A sync that fails in a round shared by three logs fails that log's
// waiters only (the log is poisoned, as after any failed sync); the other
// two acknowledge theirs and go on appending.
func TestAFailingSyncFailsOnlyItsOwnLogsWaiters(t *testing.T) {
	mem := vfs.NewMem()
	efs := errorfs.Wrap(mem)
	s := NewFlushScheduler()
	defer s.Close()
	ls := openScheduled(t, efs, s, 3, false)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for _, l := range ls { // each log's first segment exists and holds a record
		appendN(t, l, 0, 1)
	}
	efs.Inject(errorfs.Rule{Op: errorfs.Sync, PathContains: "log-1/", Nth: 1})
	waiters := make([]*chanWaiter, len(ls))
	for i, l := range ls {
		waiters[i] = &chanWaiter{ch: make(chan error, 1)}
		if _, err := l.AppendWithoutWake([]Entry{{Key: key(1), Value: value(1), Timestamp: 2}}, 1, waiters[i]); err != nil {
			t.Fatal(err)
		}
	}
	scheduleTogether(s, ls)
	for i, w := range waiters {
		err := <-w.ch
		switch {
		case i == 1 && !errors.Is(err, ErrPoisoned):
			t.Fatalf("log 1, whose sync failed: err %v, want ErrPoisoned", err)
		case i != 1 && err != nil:
			t.Fatalf("log %d: %v; only log 1's sync failed", i, err)
		}
	}
	if got := efs.Injected(); got != 1 {
		t.Fatalf("injected %d failures, want 1", got)
	}
	for _, i := range []int{0, 2} {
		appendN(t, ls[i], 2, 5)
		if d := ls[i].Durable(); d != 7 {
			t.Fatalf("log %d durable at %d, want 7", i, d)
		}
	}
	if _, err := ls[1].AppendWait([]Entry{{Value: []byte("x")}}, 1); !errors.Is(err, ErrPoisoned) {
		t.Fatalf("append to the poisoned log: %v", err)
	}
}

// A failing write in a shared round fails that log alone too.
func TestAFailingWriteInARoundFailsOnlyItsOwnLog(t *testing.T) {
	mem := vfs.NewMem()
	efs := errorfs.Wrap(mem)
	s := NewFlushScheduler()
	defer s.Close()
	ls := openScheduled(t, efs, s, 2, false)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for _, l := range ls {
		appendN(t, l, 0, 1)
	}
	efs.Inject(errorfs.Rule{Op: errorfs.Write, PathContains: "log-0/", Nth: 1})
	waiters := []*chanWaiter{{ch: make(chan error, 1)}, {ch: make(chan error, 1)}}
	for i, l := range ls {
		if _, err := l.AppendWithoutWake([]Entry{{Value: []byte("v")}}, 1, waiters[i]); err != nil {
			t.Fatal(err)
		}
	}
	scheduleTogether(s, ls)
	if err := <-waiters[0].ch; !errors.Is(err, ErrPoisoned) {
		t.Fatalf("log 0, whose write failed: %v", err)
	}
	if err := <-waiters[1].ch; err != nil {
		t.Fatalf("log 1: %v", err)
	}
}

// Rounds take many logs' records at once, and each log's records stay in
// order, dense and all acknowledged; Stats count one sync per log a round.
func TestManyAppendersOverSharedLogsAreAllAcknowledgedInOrder(t *testing.T) {
	mem := vfs.NewMem()
	s := NewFlushScheduler()
	ls := openScheduled(t, mem, s, 4, true)
	var wg sync.WaitGroup
	const perWriter = 60
	for w := range 12 {
		l := ls[w%len(ls)]
		wg.Go(func() {
			cw := &chanWaiter{ch: make(chan error, 1)}
			for i := range perWriter {
				if _, err := l.Append([]Entry{{Key: []byte{byte(w)}, Value: fmt.Appendf(nil, "w%d-%d", w, i)}}, 1, cw); err != nil {
					t.Error(err)
					return
				}
				if err := <-cw.ch; err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for i, l := range ls {
		if l.End() != 3*perWriter || l.Durable() != l.End() {
			t.Fatalf("log %d: end %d durable %d, want %d", i, l.End(), l.Durable(), 3*perWriter)
		}
		next := map[byte]int{}
		for _, r := range readAll(t, l) {
			var w, n int
			fmt.Sscanf(string(r.Value), "w%d-%d", &w, &n)
			if n != next[byte(w)] {
				t.Fatalf("log %d: writer %d's record %d at offset %d, want %d", i, w, n, r.Offset, next[byte(w)])
			}
			next[byte(w)]++
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if p := s.pending.Load(); p != 0 {
		t.Fatalf("scheduler counts %d appends pending after every log closed", p)
	}
}

// A log whose scheduler was closed first flushes on its own committer.
func TestALogOutlivingItsSchedulerStillCommits(t *testing.T) {
	mem := vfs.NewMem()
	s := NewFlushScheduler()
	ls := openScheduled(t, mem, s, 1, false)
	appendN(t, ls[0], 0, 3)
	s.Close()
	appendN(t, ls[0], 3, 3)
	if err := ls[0].Close(); err != nil {
		t.Fatal(err)
	}
}

// Under None and Periodic the scheduler is not used.
func TestASchedulerIsIgnoredOutsideOnCommit(t *testing.T) {
	mem := vfs.NewMem()
	s := NewFlushScheduler()
	defer s.Close()
	o := testOptions(mem, Periodic(0))
	o.FlushScheduler = s
	l := mustOpen(t, o)
	defer l.Close()
	if l.sched != nil {
		t.Fatal("a Periodic log took the scheduler")
	}
	appendN(t, l, 0, 3)
}
