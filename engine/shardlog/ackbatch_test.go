package shardlog

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
	"github.com/felixbroker/felix/segment/vfs/errorfs"
)

// batchLog records, in order, what the committer told: "committed f-l",
// "in f-l" (a BatchWaiter told with the batch), "flush n synced=b".
type batchLog struct {
	events []string
}

// plainWaiter is a Waiter only.
type plainWaiter struct{ log *batchLog }

func (w *plainWaiter) Committed(first, last int64, err error) {
	w.log.events = append(w.log.events, fmt.Sprintf("committed %d-%d %v", first, last, err))
}

// deferringWaiter is a BatchWaiter that defers its Flusher once per batch,
// keeping its own mark as the contract asks.
type deferringWaiter struct {
	log     *batchLog
	flusher *countingFlusher
}

func (w *deferringWaiter) Committed(first, last int64, err error) {
	w.log.events = append(w.log.events, fmt.Sprintf("committed %d-%d %v", first, last, err))
}

func (w *deferringWaiter) CommittedIn(b *AckBatch, first, last int64) {
	w.log.events = append(w.log.events, fmt.Sprintf("in %d-%d", first, last))
	if !w.flusher.deferred {
		w.flusher.deferred = true
		b.Defer(w.flusher)
	}
}

type countingFlusher struct {
	log      *batchLog
	deferred bool
}

func (f *countingFlusher) FlushAcks(info FlushInfo) {
	f.deferred = false
	f.log.events = append(f.log.events, fmt.Sprintf("flush %d synced=%v", info.Flushers, info.Synced))
}

// A flush tells every waiter in offset order, a BatchWaiter with the
// flush's batch, and only then runs what they deferred, each once, with
// how many were deferred and whether the flush waited for an fdatasync.
// The appends are queued without waking the committer, so one flush takes
// them all.
func TestAFlushRunsWhatItsWaitersDeferredAfterTheLastOfThem(t *testing.T) {
	for _, mode := range []FsyncMode{OnCommit(), Periodic(0)} {
		t.Run(mode.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := mustOpen(t, testOptions(vfs.NewMem(), mode))
				defer l.Close()
				synctest.Wait() // the committer waits for records
				log := &batchLog{}
				a := &countingFlusher{log: log}
				b := &countingFlusher{log: log}
				waiters := []Waiter{
					&deferringWaiter{log: log, flusher: a},
					&plainWaiter{log: log},
					&deferringWaiter{log: log, flusher: a}, // a again: deferred once
					&deferringWaiter{log: log, flusher: b},
				}
				for i, w := range waiters {
					if _, err := l.AppendWithoutWake([]Entry{{Value: value(int64(i))}}, 1, w); err != nil {
						t.Fatal(err)
					}
				}
				synctest.Wait()
				if l.End() != 0 {
					t.Fatalf("end %d before Wake: the committer was woken", l.End())
				}
				l.Wake()
				synctest.Wait()
				synced := mode.Kind == FsyncOnCommit
				want := []string{"in 0-0", "committed 1-1 <nil>", "in 2-2", "in 3-3",
					fmt.Sprintf("flush 2 synced=%v", synced), fmt.Sprintf("flush 2 synced=%v", synced)}
				if !slices.Equal(log.events, want) {
					t.Fatalf("told\n%q\nwant\n%q", log.events, want)
				}
			})
		})
	}
}

// A failed flush tells a BatchWaiter through Committed, with the error:
// there is no batch to defer to.
func TestAFailedFlushTellsBatchWaitersWithoutABatch(t *testing.T) {
	efs := errorfs.Wrap(vfs.NewMem())
	o := testOptions(efs, OnCommit())
	o.SegmentBytes = 1 << 20
	l := mustOpen(t, o)
	defer l.Close()
	appendN(t, l, 0, 1)
	efs.Inject(errorfs.Rule{Op: errorfs.WriteSync, PathContains: segment.SegmentSuffix, Nth: 1, Err: syscall.EIO})
	log := &batchLog{}
	w := &deferringWaiter{log: log, flusher: &countingFlusher{log: log}}
	cw := &chanWaiter{ch: make(chan error, 1)}
	if _, err := l.AppendWithoutWake([]Entry{{Value: value(1)}}, 1, w); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append([]Entry{{Value: value(2)}}, 1, cw); err != nil {
		t.Fatal(err)
	}
	if err := <-cw.ch; !errors.Is(err, syscall.EIO) {
		t.Fatalf("an append in the failed flush was told %v, want EIO", err)
	}
	if len(log.events) != 1 || !strings.HasPrefix(log.events[0], "committed 1-1 ") || strings.HasSuffix(log.events[0], "<nil>") {
		t.Fatalf("the batch waiter was told %q, want one Committed with the error", log.events)
	}
}

// Appending without a wake into a full buffer wakes the committer itself:
// an appender waiting for room must not wait for a Wake it cannot reach.
func TestAppendingWithoutAWakeIntoAFullBufferDoesNotStall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := testOptions(vfs.NewMem(), Periodic(0))
		o.SegmentBytes = 1 << 20
		l := mustOpen(t, o)
		defer l.Close()
		synctest.Wait() // the committer waits for records
		done := make(chan error, 1)
		go func() {
			for range 64 { // 64 KiB through a 2 KiB buffer
				if _, err := l.AppendWithoutWake([]Entry{{Value: make([]byte, 1024)}}, 1, nil); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
		synctest.Wait()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatal("appends without a wake stalled on a full buffer")
		}
		l.Wake()
		synctest.Wait()
		if l.End() != 64 {
			t.Fatalf("end %d of 64 after the wake", l.End())
		}
	})
}
