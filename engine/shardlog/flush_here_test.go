package shardlog

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/felixbroker/felix/segment/vfs"
)

// FlushHere writes what was appended without a wake on the caller's
// goroutine: by the time it returns the records are readable and every
// waiter has been told, with the flush's batch, and what they deferred
// has run; the committer was never woken.
func TestFlushHereWritesAndAcknowledgesOnTheCaller(t *testing.T) {
	for _, mode := range []FsyncMode{None(), Periodic(0)} {
		t.Run(mode.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				o := testOptions(vfs.NewMem(), mode)
				o.SegmentBytes = 1 << 20
				l := mustOpen(t, o)
				defer l.Close()
				appendN(t, l, 0, 1) // the first segment's file is open
				synctest.Wait()     // the committer waits for records
				log := &batchLog{}
				f := &countingFlusher{log: log}
				for i := 1; i <= 3; i++ {
					if _, err := l.AppendWithoutWake([]Entry{{Value: value(int64(i))}}, 1, &deferringWaiter{log: log, flusher: f}); err != nil {
						t.Fatal(err)
					}
				}
				if !l.FlushHere(1 << 20) {
					t.Fatal("FlushHere declined with the committer idle and the segment open")
				}
				want := []string{"in 1-1", "in 2-2", "in 3-3", "flush 1 synced=false"}
				if !slices.Equal(log.events, want) {
					t.Fatalf("told\n%q\nwant\n%q", log.events, want)
				}
				if l.End() != 4 {
					t.Fatalf("end %d after FlushHere, want 4", l.End())
				}
				if got := readAll(t, l); len(got) != 4 || string(got[3].Value) != string(value(3)) {
					t.Fatalf("read back %d records after FlushHere, want 4", len(got))
				}
				if l.FlushHere(1 << 20) {
					t.Fatal("FlushHere flushed an empty buffer")
				}
			})
		})
	}
}

// FlushHere declines, changing nothing, where the flush is the
// committer's: an fdatasync to wait for, more than maxBytes queued, a new
// segment to roll onto. The committer then writes it when woken.
func TestFlushHereLeavesTheCommitterItsWork(t *testing.T) {
	cases := []struct {
		name     string
		mode     FsyncMode
		values   int // 1000-byte values appended without a wake
		maxBytes int
	}{
		{"on_commit", OnCommit(), 1, 1 << 20},
		{"over_max_bytes", Periodic(0), 2, 1500},
		{"rollover", Periodic(0), 5, 1 << 20}, // 4 KiB segments
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				o := testOptions(vfs.NewMem(), c.mode)
				o.BufferBytes = 1 << 20
				l := mustOpen(t, o)
				defer l.Close()
				appendN(t, l, 0, 1)
				synctest.Wait()
				log := &batchLog{}
				for range c.values {
					if _, err := l.AppendWithoutWake([]Entry{{Value: make([]byte, 1000)}}, 1, &plainWaiter{log: log}); err != nil {
						t.Fatal(err)
					}
				}
				if l.FlushHere(c.maxBytes) {
					t.Fatal("FlushHere flushed")
				}
				if l.End() != 1 {
					t.Fatalf("FlushHere declined yet the end moved to %d", l.End())
				}
				synctest.Wait()
				l.mu.Lock() // the committer takes mu once woken: its writes to log come after this read
				told := len(log.events)
				l.mu.Unlock()
				if told != 0 {
					t.Fatalf("FlushHere declined yet told %d", told)
				}
				l.Wake()
				appendN(t, l, int64(1+c.values), 1) // acknowledged after them
				if len(log.events) != c.values {
					t.Fatalf("after the wake: told %d of %d", len(log.events), c.values)
				}
			})
		})
	}
}

// countWaiter counts acknowledgements per offset.
type countWaiter struct {
	told []atomic.Int32
	wg   *sync.WaitGroup
}

func (w *countWaiter) Committed(first, last int64, err error) {
	if err != nil {
		panic(fmt.Sprintf("append %d-%d failed: %v", first, last, err))
	}
	for o := first; o <= last; o++ {
		w.told[o].Add(1)
	}
	w.wg.Add(-int(last - first + 1))
}

// Appenders that flush on their own goroutine, appenders that wake the
// committer and the committer itself share the two buffers: every record
// is written once, in offset order, and acknowledged once.
func TestFlushHereBesideTheCommitter(t *testing.T) {
	const workers, each = 4, 300
	o := testOptions(vfs.NewMem(), Periodic(0))
	l := mustOpen(t, o)
	var wg sync.WaitGroup
	wg.Add(workers * each)
	w := &countWaiter{told: make([]atomic.Int32, workers*each), wg: &wg}
	var run sync.WaitGroup
	for g := range workers {
		run.Add(1)
		go func() {
			defer run.Done()
			for i := range each {
				e := []Entry{{Key: key(int64(i)), Value: value(int64(g*each + i))}}
				if g == 0 {
					if _, err := l.Append(e, 1, w); err != nil {
						t.Error(err)
						return
					}
					continue
				}
				if _, err := l.AppendWithoutWake(e, 1, w); err != nil {
					t.Error(err)
					return
				}
				if !l.FlushHere(512) {
					l.Wake()
				}
			}
		}()
	}
	run.Wait()
	wg.Wait()
	for off := range w.told {
		if n := w.told[off].Load(); n != 1 {
			t.Fatalf("offset %d told %d times", off, n)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, o)
	defer l.Close()
	got := readAll(t, l)
	if len(got) != workers*each {
		t.Fatalf("reopened with %d records, want %d", len(got), workers*each)
	}
	for i, r := range got {
		if r.Offset != int64(i) {
			t.Fatalf("record %d has offset %d", i, r.Offset)
		}
	}
}
