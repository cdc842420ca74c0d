package shardlog

import (
	"bytes"
	"errors"
	"sync"
	"testing"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

func TestAppendAssignsDenseOffsetsAndReadReturnsThem(t *testing.T) {
	for _, mode := range []FsyncMode{None(), Periodic(0), OnCommit()} {
		t.Run(mode.String(), func(t *testing.T) {
			l := mustOpen(t, testOptions(vfs.NewMem(), mode))
			defer l.Close()
			appendN(t, l, 0, 300)
			if l.End() != 300 || l.Start() != 0 {
				t.Fatalf("start %d end %d", l.Start(), l.End())
			}
			recs := readAll(t, l)
			if len(recs) != 300 {
				t.Fatalf("read %d records", len(recs))
			}
			checkPrefix(t, recs, 0)
			if st := l.Stats(); st.Segments < 5 {
				t.Fatalf("expected several rollovers, have %d segments", st.Segments)
			}
		})
	}
}

func TestABatchIsContiguousAndOrdered(t *testing.T) {
	l := mustOpen(t, testOptions(vfs.NewMem(), OnCommit()))
	defer l.Close()
	batch := make([]Entry, 40)
	for i := range batch {
		batch[i] = Entry{Key: key(int64(i)), Value: value(int64(i)), Timestamp: 5}
	}
	first, err := l.AppendWait(batch, 1)
	if err != nil || first != 0 {
		t.Fatalf("first %d err %v", first, err)
	}
	checkPrefix(t, readAll(t, l), 0)
}

func TestReadHonoursTheByteBudgetButReturnsAtLeastOneRecord(t *testing.T) {
	l := mustOpen(t, testOptions(vfs.NewMem(), OnCommit()))
	defer l.Close()
	appendN(t, l, 0, 50)
	b, next, err := l.Read(10, 1, nil)
	if err != nil || next != 11 {
		t.Fatalf("budget 1: next %d err %v", next, err)
	}
	if r, _, err := segment.DecodeRecord(b); err != nil || r.Offset != 10 {
		t.Fatalf("budget 1 read %v %v", r.Offset, err)
	}
	b, next, err = l.Read(10, 600, nil)
	if err != nil || len(b) > 600 || next <= 11 {
		t.Fatalf("budget 600: %d bytes, next %d, err %v", len(b), next, err)
	}
	// Reading appends to dst.
	out, _, err := l.Read(0, 1, []byte("prefix"))
	if err != nil || !bytes.HasPrefix(out, []byte("prefix")) {
		t.Fatalf("dst not kept: %q %v", out[:6], err)
	}
}

func TestOffsetsOutsideTheLogAreTypedErrors(t *testing.T) {
	l := mustOpen(t, testOptions(vfs.NewMem(), OnCommit()))
	defer l.Close()
	appendN(t, l, 0, 5)
	_, _, err := l.Read(6, 100, nil)
	var oe *OffsetError
	if !errors.As(err, &oe) || !errors.Is(err, ErrPastEnd) || oe.End != 5 {
		t.Fatalf("past end: %v", err)
	}
	if b, next, err := l.Read(5, 100, nil); err != nil || len(b) != 0 || next != 5 {
		t.Fatalf("at end: %d bytes, next %d, err %v", len(b), next, err)
	}
	if _, _, err := l.Read(-1, 100, nil); !errors.Is(err, ErrBelowStart) {
		t.Fatalf("below start: %v", err)
	}
}

func TestAStaleGenerationIsRefused(t *testing.T) {
	l := mustOpen(t, testOptions(vfs.NewMem(), None()))
	defer l.Close()
	if _, err := l.AppendWait([]Entry{{Value: []byte("x")}}, 5); err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendWait([]Entry{{Value: []byte("y")}}, 4); !errors.Is(err, ErrStaleGeneration) {
		t.Fatalf("append at a lower generation: %v", err)
	}
	if _, err := l.Append(nil, 5, nil); !errors.Is(err, ErrEmptyBatch) {
		t.Fatalf("empty batch: %v", err)
	}
}

// Group commit: many appenders waiting at once share flushes.
func TestOneFlushServesEveryAppendQueuedBeforeIt(t *testing.T) {
	cfs := &countingFS{FS: vfs.NewMem()}
	o := testOptions(cfs, OnCommit())
	o.SegmentBytes = 1 << 20
	l := mustOpen(t, o)
	defer l.Close()
	const writers, each = 16, 40
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		wg.Go(func() {
			for range each {
				if _, err := l.AppendWait([]Entry{{Value: []byte("0123456789")}}, 1); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if l.End() != writers*each || l.Durable() != writers*each {
		t.Fatalf("end %d durable %d", l.End(), l.Durable())
	}
	if syncs := cfs.count(); syncs >= writers*each {
		t.Fatalf("%d syncs for %d appends: no group commit", syncs, writers*each)
	}
}

func TestOnCommitAcknowledgesOnlyDurableRecords(t *testing.T) {
	mem := vfs.NewMem()
	l := mustOpen(t, testOptions(mem, OnCommit()))
	appendN(t, l, 0, 120)
	img := mem.Crash(vfs.DropUnsynced)
	l.Close()
	l2 := mustOpen(t, testOptions(img, OnCommit()))
	defer l2.Close()
	recs := readAll(t, l2)
	if len(recs) != 120 {
		t.Fatalf("%d of 120 acknowledged records survived the crash", len(recs))
	}
	checkPrefix(t, recs, 0)
}

func TestSyncMakesEverythingAppendedDurable(t *testing.T) {
	mem := vfs.NewMem()
	l := mustOpen(t, testOptions(mem, None()))
	appendN(t, l, 0, 70)
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if l.Durable() != 70 {
		t.Fatalf("durable %d after Sync", l.Durable())
	}
	img := mem.Crash(vfs.DropUnsynced)
	l.Close()
	l2 := mustOpen(t, testOptions(img, None()))
	defer l2.Close()
	checkPrefix(t, readAll(t, l2), 0)
	if l2.End() != 70 {
		t.Fatalf("end %d after crash", l2.End())
	}
}

func TestOnVisibleSeesEveryRecordOnceInOrder(t *testing.T) {
	var mu sync.Mutex
	var seen []int64
	o := testOptions(vfs.NewMem(), Periodic(0))
	o.OnVisible = func(first, next int64, records []byte) {
		mu.Lock()
		defer mu.Unlock()
		it := segment.NewIter(records)
		for r, ok := it.Next(); ok; r, ok = it.Next() {
			seen = append(seen, r.Offset)
		}
		if int64(len(seen)) != next {
			t.Errorf("OnVisible(%d, %d) left %d records seen", first, next, len(seen))
		}
	}
	l := mustOpen(t, o)
	appendN(t, l, 0, 200)
	l.Close()
	for i, off := range seen {
		if off != int64(i) {
			t.Fatalf("record %d seen as offset %d", i, off)
		}
	}
}

func TestCloseThenAppendIsRefused(t *testing.T) {
	l := mustOpen(t, testOptions(vfs.NewMem(), None()))
	appendN(t, l, 0, 3)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append([]Entry{{Value: []byte("late")}}, 1, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after close: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
}

func TestABatchLargerThanTheBufferStillGoesIn(t *testing.T) {
	o := testOptions(vfs.NewMem(), OnCommit())
	l := mustOpen(t, o)
	defer l.Close()
	big := bytes.Repeat([]byte("z"), 3*o.BufferBytes)
	if _, err := l.AppendWait([]Entry{{Value: big}}, 1); err != nil {
		t.Fatal(err)
	}
	recs := readAll(t, l)
	if len(recs) != 1 || !bytes.Equal(recs[0].Value, big) {
		t.Fatalf("big record read back as %d records", len(recs))
	}
}

func TestAppendAllocatesNothingInSteadyState(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	forEachDriver(t, func(t *testing.T, fs vfs.FS, dir string) {
		appendAllocatesNothing(t, fs, dir)
	})
}

func appendAllocatesNothing(t *testing.T, fs vfs.FS, dir string) {
	o := testOptions(fs, None())
	o.Dir = dir
	o.SegmentBytes = 64 << 20
	l := mustOpen(t, o)
	defer l.Close()
	entries := []Entry{{Key: []byte("k"), Value: make([]byte, 128), Timestamp: 1}}
	cw := &chanWaiter{ch: make(chan error, 1)}
	appendOne := func() {
		if _, err := l.Append(entries, 1, cw); err != nil {
			t.Fatal(err)
		}
		if err := <-cw.ch; err != nil {
			t.Fatal(err)
		}
	}
	for range 2000 {
		appendOne() // grow the waiter queue and buffers to their working size
	}
	if allocs := testing.AllocsPerRun(1000, appendOne); allocs > 0.05 {
		t.Fatalf("%.2f allocations per append", allocs)
	}
}

// The index holds a record's position in 32 bits: a segment size past that
// is refused before the disk is touched, not wrapped.
func TestASegmentSizePastTheIndexFormatIsRefused(t *testing.T) {
	mem := vfs.NewMem()
	o := testOptions(mem, OnCommit())
	o.SegmentBytes = SegmentBytesMax + 1
	if l, err := Open(o); !errors.Is(err, ErrInvalidOptions) {
		if l != nil {
			l.Close()
		}
		t.Fatalf("open with %d-byte segments: %v, want ErrInvalidOptions", o.SegmentBytes, err)
	}
	if n := mem.MutationCount(); n != 0 {
		t.Errorf("a refused open made %d changes to the file system", n)
	}
	o.SegmentBytes = SegmentBytesMax
	l := mustOpen(t, o)
	l.Close()
}
