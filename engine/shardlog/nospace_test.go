package shardlog

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"testing"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
	"github.com/felixbroker/felix/segment/vfs/errorfs"
)

// fate is what an appended record was told.
type fate uint8

const (
	fateAcked     fate = iota + 1
	fateAmbiguous      // a failure other than ErrNoSpace: it may be in the log or not
	fateRefused        // ErrNoSpace: none of its bytes were written, so it must not be in the log
)

// fates records what every appended record was told, and its payload.
type fates struct {
	from    int64 // the records before it were appended (and acknowledged) before the test's
	mu      sync.Mutex
	told    map[int64]fate
	payload map[int64][]byte
	wg      sync.WaitGroup
}

func newFates() *fates { return &fates{told: map[int64]fate{}, payload: map[int64][]byte{}} }

func fateOf(err error) fate {
	switch {
	case err == nil:
		return fateAcked
	case errors.Is(err, ErrNoSpace):
		return fateRefused
	}
	return fateAmbiguous
}

func (f *fates) Committed(first, last int64, err error) {
	f.mu.Lock()
	for o := first; o <= last; o++ {
		f.told[o] = fateOf(err)
	}
	f.mu.Unlock()
	f.wg.Done()
}

// appendBurst appends n batches without waking the committer, then wakes
// it once, so that one flush takes them all (and a rollover falls inside
// it), and waits for every answer. An append refused at once gave no
// offsets and is simply not recorded.
func (f *fates) appendBurst(l *Log, round, n int) {
	for j := range n {
		entries := make([]Entry, 1+(round+j)%3)
		for k := range entries {
			entries[k] = Entry{Value: fmt.Appendf(nil, "r%d-a%d-e%d-%s", round, j, k, bytes.Repeat([]byte("v"), 40+(round*7+j*13+k)%50))}
		}
		f.wg.Add(1)
		first, err := l.AppendWithoutWake(entries, 1, f)
		if err != nil {
			f.wg.Done()
			continue
		}
		f.mu.Lock()
		for k := range entries {
			f.payload[first+int64(k)] = entries[k].Value
		}
		f.mu.Unlock()
	}
	l.Wake()
	f.wg.Wait()
}

// check opens img (a restart's or a crash's view of the disk) and holds the
// promise of each fate: a record refused for lack of space is not in the
// log; with acked set, every acknowledged record is; every record present
// is the one appended at its offset.
func (f *fates) check(t *testing.T, img vfs.FS, mode FsyncMode, acked bool, what string) {
	t.Helper()
	l, err := Open(testOptions(img, mode))
	if err != nil {
		t.Fatalf("%s: does not open: %v", what, err)
	}
	defer l.Close()
	end := l.End()
	if end < f.from {
		t.Fatalf("%s: the log ends at %d, before the %d records appended earlier", what, end, f.from)
	}
	for _, r := range readAll(t, l)[f.from:] {
		if f.told[r.Offset] == fateRefused {
			t.Fatalf("%s: record %d was refused with ErrNoSpace, yet it is in the log", what, r.Offset)
		}
		if want, ok := f.payload[r.Offset]; !ok || !bytes.Equal(r.Value, want) {
			t.Fatalf("%s: record %d is %q, appended %q", what, r.Offset, r.Value, want)
		}
	}
	for off, k := range f.told {
		if acked && k == fateAcked && off >= end {
			t.Fatalf("%s: acknowledged record %d lost (log ends at %d)", what, off, end)
		}
	}
}

// The repro: under OnCommit a flush whose records begin in the
// active segment and go on into the next one; the next segment's header
// write fails with ENOSPC. The records written (and synced by the seal)
// before the failure are acknowledged, the ones bound for the segment that
// could not be made are refused with ErrNoSpace, and after a restart the
// log holds exactly the acknowledged ones.
func TestARolloverRefusedForSpaceAcknowledgesWhatItWroteAndRefusesTheRest(t *testing.T) {
	for _, mode := range []FsyncMode{OnCommit(), None(), Periodic(0)} {
		t.Run(mode.String(), func(t *testing.T) {
			mem := vfs.NewMem()
			efs := errorfs.Wrap(mem)
			l := mustOpen(t, testOptions(efs, mode))
			fillUntilRoom(t, l, 300)
			efs.Inject(errorfs.Rule{Op: errorfs.WriteSync, PathContains: segment.SegmentSuffix, Nth: 1, Err: syscall.ENOSPC})
			f := newFates()
			f.from = l.End()
			f.appendBurst(l, 0, 6)
			f.checkOrdered(t)
			if _, err := l.Append([]Entry{{Value: []byte("later")}}, 1, nil); !errors.Is(err, ErrNoSpace) || !errors.Is(err, ErrPoisoned) {
				t.Fatalf("an append after the failure: %v; want ErrNoSpace and ErrPoisoned", err)
			}
			l.Close()
			efs.Clear()
			f.check(t, mem, mode, true, "restart")
		})
	}
}

// checkOrdered holds the fates of one failed flush in offset order: some
// records acknowledged, then at most the records of one append that
// straddles the failure (ambiguous: its first part was written), then some
// refused.
func (f *fates) checkOrdered(t *testing.T) {
	t.Helper()
	offsets := make([]int64, 0, len(f.told))
	for off := range f.told {
		offsets = append(offsets, off)
	}
	slices.Sort(offsets)
	seen := map[fate]int{}
	last := fateAcked
	for _, off := range offsets {
		k := f.told[off]
		if k < last {
			t.Fatalf("record %d is %v after a record told %v: fates out of order %v", off, k, last, f.told)
		}
		last = k
		seen[k]++
	}
	if seen[fateAcked] == 0 || seen[fateRefused] == 0 || seen[fateAmbiguous] > 2 {
		t.Fatalf("fates %v; want some acknowledged, at most one append's ambiguous, the rest refused", seen)
	}
}

// fillUntilRoom appends records one at a time until the active segment
// has at most room bytes left.
func fillUntilRoom(t *testing.T, l *Log, room int64) {
	t.Helper()
	for i := int64(0); ; i++ {
		l.mu.Lock()
		left := l.opts.SegmentBytes - l.tail.fillPos
		next := l.next
		l.mu.Unlock()
		if left <= room {
			return
		}
		appendN(t, l, next, 1)
	}
}

// A sweep: ENOSPC (or a short write ending in ENOSPC) on the n-th call of
// each kind a log makes, under every mode, with bursts that put
// rollovers inside flushes. Whatever the call, no record refused with
// ErrNoSpace is in the log after a restart or a crash, and (OnCommit) no
// acknowledged record is lost.
func TestNoRecordRefusedForLackOfSpaceIsInTheLog(t *testing.T) {
	rules := []errorfs.Rule{
		{Op: errorfs.Create}, {Op: errorfs.Preallocate}, {Op: errorfs.Write}, {Op: errorfs.WriteSync},
		{Op: errorfs.Sync}, {Op: errorfs.Truncate}, {Op: errorfs.Rename}, {Op: errorfs.SyncDir},
		{Op: errorfs.Write, ShortBy: 40}, {Op: errorfs.WriteSync, ShortBy: 40},
	}
	nths := []int{1, 2, 3, 5, 8, 13, 21, 34}
	if testing.Short() {
		nths = []int{1, 3, 8}
	}
	for _, mode := range []FsyncMode{OnCommit(), None(), Periodic(0)} {
		for _, prepare := range []bool{false, true} {
			for _, r := range rules {
				for _, n := range nths {
					r.Nth, r.Err = n, syscall.ENOSPC
					what := fmt.Sprintf("%v prepare=%v %v#%d short=%d", mode, prepare, r.Op, n, r.ShortBy)
					if !noSpaceOnce(t, mode, prepare, r, what) {
						break // the workload makes fewer such calls: larger n fail nothing either
					}
				}
			}
		}
	}
}

// noSpaceOnce runs one case of the sweep and reports whether the rule
// failed a call. A restart sees the disk as the process left it; under
// OnCommit a second run looks at what a machine crash leaves instead.
func noSpaceOnce(t *testing.T, mode FsyncMode, prepare bool, r errorfs.Rule, what string) bool {
	t.Helper()
	if !noSpaceRun(t, mode, prepare, r, false, what+": restart") {
		return false
	}
	if mode.Kind == FsyncOnCommit {
		noSpaceRun(t, mode, prepare, r, true, what+": crash")
	}
	return true
}

func noSpaceRun(t *testing.T, mode FsyncMode, prepare bool, r errorfs.Rule, crash bool, what string) bool {
	t.Helper()
	mem := vfs.NewMem()
	efs := errorfs.Wrap(mem)
	o := testOptions(efs, mode)
	o.PrepareSegments = prepare
	l := mustOpen(t, o)
	efs.Inject(r)
	f := newFates()
	for round := range 12 {
		f.appendBurst(l, round, 5)
	}
	l.Close()
	efs.Clear()
	if efs.Injected() == 0 {
		return false
	}
	img := mem
	if crash {
		img = mem.Crash(vfs.DropUnsynced)
	}
	f.check(t, img, mode, true, what)
	return true
}
