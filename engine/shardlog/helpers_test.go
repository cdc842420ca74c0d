package shardlog

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

const testDir = "/data/shard"

// testOptions are small enough that a few hundred records roll over several
// times. The background verification is not paced: the process-wide
// pacer's schedule runs on real time, a synctest bubble's clock does not.
func testOptions(fs vfs.FS, mode FsyncMode) Options {
	return Options{FS: fs, Dir: testDir, Fsync: mode, SegmentBytes: 4096, BufferBytes: 2048, IndexIntervalBytes: 256,
		VerifyPacer: unpaced}
}

var unpaced = NewPacer(0)

func mustOpen(t testing.TB, o Options) *Log {
	t.Helper()
	l, err := Open(o)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return l
}

// value is the deterministic payload of record i, so a reader can check
// every byte of what survived.
func value(i int64) []byte {
	return fmt.Appendf(nil, "value-%d-%s", i, bytes.Repeat([]byte{byte('a' + i%26)}, int(i%97)))
}

func key(i int64) []byte { return fmt.Appendf(nil, "key-%d", i%13) }

// appendN appends records first..first+n-1 one Append each, waiting for
// each acknowledgement, and returns the offsets acknowledged.
func appendN(t testing.TB, l *Log, first, n int64) []int64 {
	t.Helper()
	var acked []int64
	// A waiter of its own rather than AppendWait's pooled one: pooled
	// channels may come from outside a synctest bubble.
	cw := &chanWaiter{ch: make(chan error, 1)}
	for i := first; i < first+n; i++ {
		off, err := l.Append([]Entry{{Key: key(i), Value: value(i), Timestamp: i + 1}}, 1, cw)
		if err == nil {
			err = <-cw.ch
		}
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		if off != i {
			t.Fatalf("append %d got offset %d", i, off)
		}
		acked = append(acked, off)
	}
	return acked
}

// readAll reads every visible record from the start of the log.
func readAll(t testing.TB, l *Log) []segment.Record {
	t.Helper()
	var out []segment.Record
	for from := l.Start(); from < l.End(); {
		b, next, err := l.Read(from, 1000, nil)
		if err != nil {
			t.Fatalf("read at %d: %v", from, err)
		}
		if next <= from {
			t.Fatalf("read at %d made no progress (end %d)", from, l.End())
		}
		it := segment.NewIter(b)
		for r, ok := it.Next(); ok; r, ok = it.Next() {
			r.Key, r.Value = bytes.Clone(r.Key), bytes.Clone(r.Value)
			out = append(out, r)
		}
		if it.Err() != nil {
			t.Fatalf("iterating read at %d: %v", from, it.Err())
		}
		from = next
	}
	return out
}

// checkPrefix asserts that the log holds exactly records start..start+n-1
// as appendN wrote them.
func checkPrefix(t testing.TB, recs []segment.Record, start int64) {
	t.Helper()
	for i, r := range recs {
		want := start + int64(i)
		if r.Offset != want || !bytes.Equal(r.Value, value(want)) || !bytes.Equal(r.Key, key(want)) {
			t.Fatalf("record %d: offset %d key %q value %q; want offset %d", i, r.Offset, r.Key, r.Value, want)
		}
	}
}

// countingFS counts Syncs and WriteAtSyncs, to see group commit at work.
type countingFS struct {
	vfs.FS
	mu    sync.Mutex
	syncs int
}

func (c *countingFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &countingFile{File: f, fs: c}, nil
}

func (c *countingFS) Create(n string) (vfs.File, error)        { return c.wrap(c.FS.Create(n)) }
func (c *countingFS) OpenReadWrite(n string) (vfs.File, error) { return c.wrap(c.FS.OpenReadWrite(n)) }

func (c *countingFS) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.syncs
}

type countingFile struct {
	vfs.File
	fs *countingFS
}

func (f *countingFile) bump() {
	f.fs.mu.Lock()
	f.fs.syncs++
	f.fs.mu.Unlock()
}

func (f *countingFile) Sync() error { f.bump(); return f.File.Sync() }

func (f *countingFile) WriteAtSync(p []byte, off int64) (int, error) {
	f.bump()
	return f.File.WriteAtSync(p, off)
}
