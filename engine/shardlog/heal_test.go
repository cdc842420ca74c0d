package shardlog

import (
	"errors"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/felixbroker/felix/segment/vfs"
	"github.com/felixbroker/felix/segment/vfs/errorfs"
)

// appendReporting appends records from next on, reporting each failure to
// h as an owner does, until one is refused at once; it returns the offset
// after the last acknowledged record.
func appendReporting(t *testing.T, h *Healer, next int64) int64 {
	t.Helper()
	cw := &chanWaiter{ch: make(chan error, 1)} // not AppendWait's pooled one: this is a synctest bubble
	acked := next
	for limit := next + 1000; next < limit; next++ {
		l := h.Log()
		_, err := l.Append([]Entry{{Key: key(next), Value: value(next)}}, 1, cw)
		if err == nil {
			err = <-cw.ch
		}
		if err != nil {
			h.Failed(l, err)
		}
		switch {
		case errors.Is(err, ErrNoSpace):
			return acked
		case err == nil:
			acked = next + 1
		case !errors.Is(err, syscall.ENOSPC):
			t.Fatalf("append %d on a full disk: %v", next, err)
		}
	}
	t.Fatal("a thousand appends on a full disk and none refused")
	return 0
}

// A Healer leaves a log that ran out of space failed while the disk stays
// full (Refusal says so), reopens it once space is back, tries again when
// its owner refuses the reopened log, and serves appends from the log the
// owner took: one that holds every acknowledged record.
func TestAHealerReopensALogOutOfSpaceOnceSpaceIsBackUntilItsOwnerTakesIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		efs := errorfs.Wrap(vfs.NewMem())
		l := mustOpen(t, testOptions(efs, OnCommit()))
		var takes atomic.Int32
		var h *Healer
		h = NewHealer(l, func(_, n *Log) error {
			if takes.Add(1) == 1 {
				return errors.New("not yet")
			}
			h.Swap(n)
			return nil
		}, nil)
		defer h.Close()
		appendN(t, l, 0, 30)
		fillDisk(efs)
		acked := appendReporting(t, h, 30)
		if err := h.Refusal(); !errors.Is(err, ErrNoSpace) {
			t.Fatalf("the refusal of a log waiting for space: %v; want ErrNoSpace", err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if takes.Load() != 0 || h.Log() != l {
			t.Fatal("a log was reopened while the disk was still full")
		}
		efs.Clear()
		time.Sleep(2 * HealBackoffMax) // the owner refuses the first reopen
		synctest.Wait()
		if n := takes.Load(); n != 2 || h.Log() == l {
			t.Fatalf("%d reopens taken in, the log replaced %v; want 2 and the second taken", n, h.Log() != l)
		}
		if err := h.Refusal(); err != nil {
			t.Fatalf("the refusal of the reopened log: %v", err)
		}
		if end := h.Log().End(); end < acked {
			t.Fatalf("the reopened log ends at %d; %d were acknowledged", end, acked)
		}
		checkPrefix(t, readAll(t, h.Log())[:acked], 0)
		appendN(t, h.Log(), h.Log().End(), 40)
	})
}

// A Healer leaves alone a log that failed for another cause than space
// (EIO), and Close stops the retries of one waiting for space: nothing is
// reopened afterwards and no goroutine is left (synctest.Test would
// report it).
func TestAHealerLeavesEIOAloneAndStopsRetryingOnClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		efs := errorfs.Wrap(vfs.NewMem())
		eio := NewHealer(mustOpen(t, testOptions(efs, OnCommit())), func(_, _ *Log) error {
			t.Error("a log failed by EIO was reopened")
			return errors.New("no")
		}, nil)
		efs.Inject(errorfs.Rule{Op: errorfs.WriteSync, PathContains: testDir, Err: syscall.EIO})
		if _, err := appendOne(eio); !errors.Is(err, syscall.EIO) {
			t.Fatalf("an append over a failing disk: %v", err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		eio.Close()

		efs.Clear()
		fillDisk(efs)
		full := NewHealer(mustOpen(t, testOptions(efs, OnCommit())), func(_, _ *Log) error {
			t.Error("a log was reopened on a full disk")
			return errors.New("no")
		}, nil)
		appendReporting(t, full, 0)
		refused := efs.Injected()
		time.Sleep(time.Minute)
		synctest.Wait()
		probes := efs.Injected()
		if probes == refused {
			t.Fatal("a minute on a full disk and no reopen was tried")
		}
		if err := full.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if efs.Injected() != probes {
			t.Fatal("the disk was probed after Close")
		}
	})
}

// appendOne appends one record to h's log and waits, reporting a failure.
func appendOne(h *Healer) (int64, error) {
	cw := &chanWaiter{ch: make(chan error, 1)}
	l := h.Log()
	off, err := l.Append([]Entry{{Value: []byte("x")}}, 1, cw)
	if err == nil {
		err = <-cw.ch
	}
	if err != nil {
		h.Failed(l, err)
	}
	return off, err
}
