package shardlog

import (
	"bytes"
	"sync/atomic"
	"testing"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// readCountingFS counts the ReadAt calls made on the files it opens.
type readCountingFS struct {
	vfs.FS
	reads *atomic.Int64
}

type readCountingFile struct {
	vfs.File
	reads *atomic.Int64
}

func (f readCountingFile) ReadAt(p []byte, off int64) (int, error) {
	f.reads.Add(1)
	return f.File.ReadAt(p, off)
}

func (c readCountingFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return readCountingFile{File: f, reads: c.reads}, nil
}

func (c readCountingFS) Create(name string) (vfs.File, error) { return c.wrap(c.FS.Create(name)) }
func (c readCountingFS) Open(name string) (vfs.File, error)   { return c.wrap(c.FS.Open(name)) }
func (c readCountingFS) OpenReadWrite(name string) (vfs.File, error) {
	return c.wrap(c.FS.OpenReadWrite(name))
}

// A read of one record that has an index entry after it is one ReadAt,
// however much larger than the index interval the record is: the record
// ends before that entry's position, so the first read reaches it. Sealed
// (reopened) and active segments alike.
func TestAOneRecordReadIsOneFileRead(t *testing.T) {
	reads := &atomic.Int64{}
	fs := readCountingFS{FS: vfs.NewMem(), reads: reads}
	o := Options{FS: fs, Dir: testDir, Fsync: None(), IndexIntervalBytes: 256}
	l := mustOpen(t, o)
	const n = 21
	valueOf := func(i int64) []byte {
		size := 50
		if i%2 == 1 {
			size = 2000 // far past the first window (1 + 256 + overhead)
		}
		return bytes.Repeat([]byte{byte('a' + i%26)}, size)
	}
	for i := range int64(n) {
		if _, err := l.AppendWait([]Entry{{Key: []byte("k"), Value: valueOf(i), Timestamp: i + 1}}, 1); err != nil {
			t.Fatal(err)
		}
	}
	check := func(l *Log, state string) {
		t.Helper()
		for off := range int64(n - 1) { // the last record has no entry after it
			reads.Store(0)
			out, next, err := l.Read(off, 1, nil)
			if err != nil || next != off+1 {
				t.Fatalf("%s: read %d: next %d, %v", state, off, next, err)
			}
			it := segment.NewIter(out)
			r, ok := it.Next()
			if !ok || r.Offset != off || !bytes.Equal(r.Value, valueOf(off)) {
				t.Fatalf("%s: read %d returned offset %d (ok %v)", state, off, r.Offset, ok)
			}
			if got := reads.Load(); got != 1 {
				t.Fatalf("%s: read of record %d (%d bytes) took %d file reads", state, off, len(r.Value), got)
			}
		}
	}
	check(l, "active")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, o)
	defer l.Close()
	check(l, "reopened")
}
