package engine

import (
	"errors"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment/vfs"
	"github.com/felixbroker/felix/segment/vfs/errorfs"
)

// fillDisk makes efs a full disk under dir: every call that takes new
// space (a new file, a reservation) fails with ENOSPC. Writes into space a
// file already holds pass, as on a file system that preallocates.
func fillDisk(efs *errorfs.FS, dir string) {
	for _, op := range []errorfs.OpKind{errorfs.Create, errorfs.Preallocate} {
		efs.Inject(errorfs.Rule{Op: op, PathContains: dir, Err: syscall.ENOSPC})
	}
}

// openSmallEngine opens an engine over fs whose logs roll over every few
// dozen records, with one durable OnCommit stream of one shard.
func openSmallEngine(t *testing.T, fs vfs.FS) (*Engine, *Stream) {
	t.Helper()
	e, err := Open(Options{FS: fs, Dir: "/data", Fsync: shardlog.OnCommit(), SegmentBytes: 4096, BufferBytes: 2048})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if _, err := e.Stream(sid); errors.Is(err, ErrStreamNotFound) {
		if _, err := e.CreateStream(sid, StreamConfig{Shards: 1, Durable: true}); err != nil {
			t.Fatal(err)
		}
	}
	s, err := e.Stream(sid)
	if err != nil {
		t.Fatal(err)
	}
	return e, s
}

// publishUntilRefused publishes one record at a time from i on until the
// shard refuses one at once, as a full disk makes it, and returns the
// offset after the last acknowledged record.
func publishUntilRefused(t *testing.T, s *Stream, i int) int64 {
	t.Helper()
	for limit := i + 1000; i < limit; i++ {
		w := newWaiter()
		err := s.Publish([]Record{rec("", i)}, w)
		if errors.Is(err, shardlog.ErrNoSpace) {
			return s.slot(0).End()
		}
		if err != nil {
			t.Fatalf("publish %d on a full disk: %v", i, err)
		}
		<-w.done
		if w.err != nil && !errors.Is(w.err, syscall.ENOSPC) {
			t.Fatalf("publish %d on a full disk failed with %v", i, w.err)
		}
	}
	t.Fatal("a thousand publishes on a full disk and none refused")
	return 0
}

// A shard whose disk filled up refuses publishes with ErrNoSpace while
// the disk stays full (its reopen is retried with backoff, reads go on),
// and once space is freed it serves again without a restart: publishes are
// acknowledged, a live subscriber sees every record with no gap, and a
// restart finds what was acknowledged.
func TestAShardOutOfSpaceServesAgainOnceSpaceIsFreedWithoutARestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := vfs.NewMem()
		efs := errorfs.Wrap(mem)
		e, s := openSmallEngine(t, efs)
		sh := s.slot(0)
		sub, err := sh.Subscribe(SubscribeOptions{Start: StartEarliest})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			publish(t, s, rec("", i))
		}
		fillDisk(efs, "/data/streams")
		acked := publishUntilRefused(t, s, 20)
		time.Sleep(time.Minute) // several reopens, each refused by the probe
		synctest.Wait()
		if err := s.Publish([]Record{rec("", 9999)}, nil); !errors.Is(err, shardlog.ErrNoSpace) {
			t.Fatalf("a publish a minute later, the disk still full: %v", err)
		}
		if _, _, err := sh.Read(0, 1<<20, nil); err != nil {
			t.Fatalf("a read while the disk is full: %v", err)
		}
		efs.Clear() // space is freed
		time.Sleep(reopenBackoffMax)
		synctest.Wait()
		for i := range 60 { // across rollovers again
			publish(t, s, rec("", 10000+i))
		}
		end := sh.End()
		if end < acked+60 {
			t.Fatalf("the shard ends at %d; %d were acknowledged before and 60 after", end, acked)
		}
		recs := collect(t, sub, int(end))
		for i, r := range recs {
			if r.Offset != int64(i) {
				t.Fatalf("the subscriber got offset %d as its record %d: a gap or a duplicate", r.Offset, i)
			}
		}
		e.Close()
		_, s2 := openSmallEngine(t, mem)
		if got := s2.slot(0).End(); got != end {
			t.Fatalf("a restart ends at %d; the reopened shard ended at %d", got, end)
		}
	})
}

// Closing the engine while a shard waits for space stops the retries: no
// goroutine is left (synctest.Test would report it), and Close returns.
func TestClosingAShardWaitingForSpaceStopsItsRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		efs := errorfs.Wrap(vfs.NewMem())
		e, s := openSmallEngine(t, efs)
		fillDisk(efs, "/data/streams")
		publishUntilRefused(t, s, 0)
		time.Sleep(time.Second)
		if err := e.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
	})
}

// A log that failed for another cause than space (EIO) is not reopened:
// the disk is suspect, and its publishes stay refused until a restart.
func TestAShardThatFailedWithEIOIsNotReopened(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		efs := errorfs.Wrap(vfs.NewMem())
		_, s := openSmallEngine(t, efs)
		efs.Inject(errorfs.Rule{Op: errorfs.WriteSync, PathContains: "/data/streams", Nth: 1, Err: syscall.EIO})
		w := newWaiter()
		if err := s.Publish([]Record{rec("", 0)}, w); err != nil {
			t.Fatal(err)
		}
		<-w.done
		before := s.slot(0).log.(*diskLog).current()
		time.Sleep(time.Minute)
		synctest.Wait()
		if err := s.Publish([]Record{rec("", 1)}, nil); !errors.Is(err, syscall.EIO) {
			t.Fatalf("a publish after EIO: %v", err)
		}
		if s.slot(0).log.(*diskLog).current() != before {
			t.Fatal("a log failed with EIO was reopened")
		}
	})
}

// A publish whose write failed partway (ENOSPC after some of its bytes)
// is told its fate is unknown; the reopened log recovers the records that
// were whole, and a live subscriber is handed them before the records
// published after the reopen: no gap at the join.
func TestRecordsAReopenRecoversReachTheLiveSubscribers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		efs := errorfs.Wrap(vfs.NewMem())
		_, s := openSmallEngine(t, efs)
		sh := s.slot(0)
		for i := range 5 {
			publish(t, s, rec("", i))
		}
		sub, err := sh.Subscribe(SubscribeOptions{Start: StartLatest})
		if err != nil {
			t.Fatal(err)
		}
		efs.Inject(errorfs.Rule{Op: errorfs.WriteSync, PathContains: "/data/streams", Nth: 1, ShortBy: 1, Err: syscall.ENOSPC})
		w := newWaiter()
		if err := s.Publish([]Record{rec("", 5), rec("", 6), rec("", 7)}, w); err != nil {
			t.Fatal(err)
		}
		<-w.done
		if !errors.Is(w.err, syscall.ENOSPC) || errors.Is(w.err, shardlog.ErrNoSpace) {
			t.Fatalf("a publish whose write failed partway: %v; want ENOSPC, not ErrNoSpace (its fate is unknown)", w.err)
		}
		if err := s.Publish([]Record{rec("", 8)}, nil); !errors.Is(err, shardlog.ErrNoSpace) {
			t.Fatalf("a publish after the failure: %v", err)
		}
		time.Sleep(reopenBackoffMin)
		synctest.Wait()
		if sh.End() != 7 {
			t.Fatalf("the reopened shard ends at %d; want 7 (records 5 and 6 whole, 7 torn)", sh.End())
		}
		publish(t, s, rec("", 9))
		got := collect(t, sub, 3)
		for i, want := range []string{"v5", "v6", "v9"} {
			if got[i].Offset != int64(5+i) || string(got[i].Value) != want {
				t.Fatalf("the live subscriber's record %d is offset %d %q; want offset %d %q", i, got[i].Offset, got[i].Value, 5+i, want)
			}
		}
	})
}
