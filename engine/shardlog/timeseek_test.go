package shardlog

import (
	"testing"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// timedLog appends n records whose timestamps are 10*(i+1) (times, when given,
// replaces them), with a control record every 50, and returns the log.
func timedLog(t *testing.T, fs vfs.FS, n int64, times func(i int64) int64) *Log {
	t.Helper()
	l := mustOpen(t, testOptions(fs, OnCommit()))
	for i := range n {
		e := Entry{Key: key(i), Value: value(i), Timestamp: 10 * (i + 1)}
		if times != nil {
			e.Timestamp = times(i)
		}
		if i%50 == 25 {
			e.Flags = segment.FlagControl
		}
		if _, err := l.AppendWait([]Entry{e}, 1); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// firstAtOrAfter is the answer by brute force.
func firstAtOrAfter(recs []segment.Record, ts, end int64) int64 {
	for _, r := range recs {
		if r.Flags&segment.FlagControl == 0 && r.Timestamp >= ts {
			return r.Offset
		}
	}
	return end
}

// OffsetForTime finds the first record at or after a time, as a scan of
// the whole log would, on sealed segments (opened lazily after a reopen)
// and on the tail; control records are passed over.
func TestOffsetForTimeFindsTheFirstRecordAtOrAfterTheTime(t *testing.T) {
	mem := vfs.NewMem()
	l := timedLog(t, mem, 600, nil)
	l.Close()
	l = mustOpen(t, testOptions(mem, OnCommit())) // sealed segments open on their header
	defer l.Close()
	if l.Stats().Segments < 5 {
		t.Fatalf("%d segments: the test needs several", l.Stats().Segments)
	}
	recs := readAll(t, l)
	for _, ts := range []int64{-5, 0, 1, 10, 245, 250, 251, 2500, 3333, 5990, 5991, 1 << 40} {
		got, err := l.OffsetForTime(ts)
		if want := firstAtOrAfter(recs, ts, l.End()); err != nil || got != want {
			t.Errorf("OffsetForTime(%d) = %d, %v; want %d", ts, got, err, want)
		}
	}
}

// Timestamps a producer gave need not increase: the answer is still the
// first record, in offset order, at or after the time.
func TestOffsetForTimeWithTimestampsOutOfOrder(t *testing.T) {
	l := timedLog(t, vfs.NewMem(), 400, func(i int64) int64 { return (i * 7919) % 1000 })
	defer l.Close()
	recs := readAll(t, l)
	for ts := int64(0); ts <= 1001; ts += 37 {
		got, err := l.OffsetForTime(ts)
		if want := firstAtOrAfter(recs, ts, l.End()); err != nil || got != want {
			t.Errorf("OffsetForTime(%d) = %d, %v; want %d", ts, got, err, want)
		}
	}
}

// The lookup reads indexes and about one index interval of records, not
// the log: here under a tenth of it.
func TestOffsetForTimeDoesNotReadTheLog(t *testing.T) {
	mem := vfs.NewMem()
	timedLog(t, mem, 3000, nil).Close()
	fs := &byteCountingFS{FS: mem, bytes: map[string]int64{}}
	o := testOptions(fs, OnCommit())
	o.VerifyPacer = NewPacer(1) // the verifier reads a byte a second: not during this test
	l := mustOpen(t, o)
	defer l.Close()
	size := l.Stats().Bytes
	before := fs.total()
	if off, err := l.OffsetForTime(10 * 2223); err != nil || off != 2222 {
		t.Fatalf("OffsetForTime = %d, %v; want 2222", off, err)
	}
	read := fs.total() - before
	t.Logf("the lookup read %d bytes of a log of %d", read, size)
	if read > size/10 {
		t.Fatalf("the lookup read %d bytes of a log of %d", read, size)
	}
}

// Times are the oldest record's time and the newest; zero for an empty log.
func TestTimesAreTheOldestAndNewestRecords(t *testing.T) {
	empty := mustOpen(t, testOptions(vfs.NewMem(), OnCommit()))
	defer empty.Close()
	if first, newest, err := empty.Times(); first != 0 || newest != 0 || err != nil {
		t.Fatalf("empty log: %d %d %v", first, newest, err)
	}
	l := timedLog(t, vfs.NewMem(), 300, func(i int64) int64 { return 1000 + i })
	defer l.Close()
	if first, newest, err := l.Times(); first != 1000 || newest != 1299 || err != nil {
		t.Fatalf("Times = %d, %d, %v; want 1000, 1299", first, newest, err)
	}
}

// BenchmarkOffsetForTime looks a time up in a log of sealed segments and
// a tail: the index search and about one interval's read.
func BenchmarkOffsetForTime(b *testing.B) {
	mem := vfs.NewMem()
	l := mustOpen(b, testOptions(mem, None()))
	defer l.Close()
	const n = 5000
	for i := range int64(n) {
		if _, err := l.AppendWait([]Entry{{Key: key(i), Value: value(i), Timestamp: 10 * (i + 1)}}, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		want := int64(i*7919) % n
		if off, err := l.OffsetForTime(10 * (want + 1)); err != nil || off != want {
			b.Fatalf("OffsetForTime = %d, %v; want %d", off, err, want)
		}
	}
}
