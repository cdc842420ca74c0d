package shardlog

import (
	"bytes"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// byteCountingFS counts the bytes read through the files it opens, per file.
type byteCountingFS struct {
	vfs.FS
	mu    sync.Mutex
	bytes map[string]int64
}

func (c *byteCountingFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &byteCountingFile{File: f, fs: c}, nil
}

func (c *byteCountingFS) Open(n string) (vfs.File, error) { return c.wrap(c.FS.Open(n)) }
func (c *byteCountingFS) OpenReadWrite(n string) (vfs.File, error) {
	return c.wrap(c.FS.OpenReadWrite(n))
}

func (c *byteCountingFS) read(name string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes[name]
}

func (c *byteCountingFS) total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := int64(0)
	for _, b := range c.bytes {
		n += b
	}
	return n
}

type byteCountingFile struct {
	vfs.File
	fs *byteCountingFS
}

func (f *byteCountingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.fs.mu.Lock()
	f.fs.bytes[f.Name()] += int64(n)
	f.fs.mu.Unlock()
	return n, err
}

// Open reads what may be unsynced (the active segment) in full, and of
// each sealed segment its header alone. So a restart's reads grow with the
// number of segments, not with the bytes in them. (The verifier, paced
// here at a byte a second, reads one segment's index and last records
// before it waits.)
func TestOpenReadsSmallPiecesOfEachSealedSegment(t *testing.T) {
	mem := vfs.NewMem()
	o := Options{FS: mem, Dir: testDir, Fsync: OnCommit(), SegmentBytes: 256 << 10, VerifyPacer: unpaced}
	l := mustOpen(t, o)
	const recordBytes = 200
	appendBatches(t, l, 40_000, recordBytes)
	logBytes := l.Stats().Bytes
	l.Close()
	counting := &byteCountingFS{FS: mem, bytes: map[string]int64{}}
	o.FS, o.VerifyPacer = counting, NewPacer(1)
	l = mustOpen(t, o)
	defer l.Close()
	segs := *l.segs.Load()
	if len(segs) < 30 {
		t.Fatalf("only %d segments", len(segs))
	}
	const indexHeadBytes = 48 + 24
	budget := counting.read(filepath.Join(testDir, pointName)) + activeSeg(l).visibleEnd.Load()
	tail := int64(segment.DefaultIndexIntervalBytes + segment.RecordSize(0, recordBytes))
	verifier := indexHeadBytes + tail + segment.HeaderSize
	for _, s := range segs[:len(segs)-1] {
		size, _ := mem.Stat(indexPath(s))
		verifier = max(verifier, size+indexHeadBytes+tail+segment.HeaderSize)
		budget += segment.HeaderSize
	}
	budget += verifier
	got := counting.total()
	if got > budget || got > logBytes/10 {
		t.Fatalf("open read %d bytes of a %d-byte log in %d segments; the budget is %d", got, logBytes, len(segs), budget)
	}
	t.Logf("open read %d bytes of a %d-byte log in %d segments (budget %d)", got, logBytes, len(segs), budget)
}

// appendBatches appends n records of recordBytes each, 100 to an Append.
func appendBatches(t *testing.T, l *Log, n, recordBytes int) {
	t.Helper()
	batch := make([]Entry, 100)
	for i := range batch {
		batch[i] = Entry{Value: bytes.Repeat([]byte{'v'}, recordBytes), Timestamp: 1}
	}
	for i := 0; i < n; i += len(batch) {
		if _, err := l.AppendWait(batch, 1); err != nil {
			t.Fatal(err)
		}
	}
}

// A sealed segment whose header is damaged (what Open reads of it) is
// scanned at open, and the damage refuses the open as it always did.
func TestADamagedSealedHeaderStillRefusesTheOpen(t *testing.T) {
	mem := vfs.NewMem()
	segs := sealedLog(t, mem, 600)
	flip(t, mem, segs[1], 20) // in the base offset
	_, err := Open(testOptions(mem, OnCommit()))
	var ce *segment.CorruptionError
	if !errors.As(err, &ce) || ce.File != segs[1] || ce.Pos != 0 {
		t.Fatalf("open of a sealed segment with a damaged header: %v", err)
	}
}
