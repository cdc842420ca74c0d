package shardlog

import (
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// verifyDeadline bounds a wait for the background verification: a deadline
// on the event, not a guess at how long it takes.
const verifyDeadline = 20 * time.Second

// sealedLog writes n records under OnCommit (every rollover seals, and the
// recovery point ends in the last segment) and closes the log. It returns
// the paths of its segments, oldest first.
func sealedLog(t *testing.T, mem *vfs.MemFS, n int64) []string {
	t.Helper()
	l := mustOpen(t, testOptions(mem, OnCommit()))
	appendN(t, l, 0, n)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	names, _ := mem.List(testDir)
	var segs []string
	for _, name := range names {
		if filepath.Ext(name) == segment.SegmentSuffix {
			segs = append(segs, filepath.Join(testDir, name))
		}
	}
	if len(segs) < 4 {
		t.Fatalf("only %d segments", len(segs))
	}
	return segs
}

// midRecordPos is a byte inside a record of the segment at path that lies
// before its index's last entry: damage there is out of reach of Open's
// checks, so only the verifier or a read can find it.
func midRecordPos(t *testing.T, fs vfs.FS, path string) int64 {
	t.Helper()
	f, err := fs.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	size, _ := f.Size()
	sum, err := segment.Scan(f, size, segment.ScanOptions{Sealed: true, IndexIntervalBytes: 256})
	if err != nil || len(sum.Index) < 3 {
		t.Fatalf("scan of %s: %d entries, %v", path, len(sum.Index), err)
	}
	return int64(sum.Index[1].Pos) + segment.RecordHeaderSize + 3 // in the second entry's record's key
}

func waitVerified(t *testing.T, l *Log) {
	t.Helper()
	select {
	case <-l.Verified():
	case <-time.After(verifyDeadline):
		t.Fatalf("the background verification did not finish: %+v", l.Stats())
	}
}

// checkOfflineAt asserts err is the log's offline error, naming path and a
// byte at or shortly before pos (the start of the damaged record).
func checkOfflineAt(t *testing.T, err error, path string, pos int64) {
	t.Helper()
	var ce *segment.CorruptionError
	if !errors.Is(err, ErrOffline) || !errors.Is(err, segment.ErrCorrupt) || !errors.As(err, &ce) {
		t.Fatalf("got %v, want the log offline with a corruption error", err)
	}
	if ce.File != path || ce.Pos > pos || ce.Pos < pos-segment.RecordHeaderSize-8 {
		t.Fatalf("damage reported in %s at byte %d, flipped %s at byte %d", ce.File, ce.Pos, path, pos)
	}
}

// A byte flipped in the middle of an early sealed segment no longer refuses
// the open. The background verification finds it: the log goes offline,
// every read (of any segment) and every append fails naming the file and
// the byte, and OnOffline hears of it once.
func TestDamageInASealedSegmentTakesTheLogOfflineOnceVerified(t *testing.T) {
	mem := vfs.NewMem()
	segs := sealedLog(t, mem, 600)
	pos := midRecordPos(t, mem, segs[1])
	flip(t, mem, segs[1], pos)
	o := testOptions(mem, OnCommit())
	var heard atomic.Int32
	o.OnOffline = func(error) { heard.Add(1) }
	l := mustOpen(t, o)
	defer l.Close()
	waitVerified(t, l)
	checkOfflineAt(t, l.Offline(), segs[1], pos)
	for _, from := range []int64{0, l.End() - 1} {
		_, _, err := l.Read(from, 1000, nil)
		checkOfflineAt(t, err, segs[1], pos)
	}
	_, err := l.AppendWait([]Entry{{Value: []byte("after")}}, 1)
	checkOfflineAt(t, err, segs[1], pos)
	if st := l.Stats(); !st.Offline || heard.Load() != 1 {
		t.Fatalf("offline %v, OnOffline called %d times", st.Offline, heard.Load())
	}
}

// With nothing damaged the verification reads every sealed segment to the
// end and the log serves on; its progress is in Stats.
func TestTheVerificationCoversEverySealedSegment(t *testing.T) {
	mem := vfs.NewMem()
	segs := sealedLog(t, mem, 600)
	l := mustOpen(t, testOptions(mem, OnCommit()))
	defer l.Close()
	waitVerified(t, l)
	st := l.Stats()
	sealed := int64(len(segs) - 1)
	if st.Offline || st.VerifiedSegments != sealed || st.VerifyPendingSegments != 0 || st.VerifyFailures != 0 {
		t.Fatalf("after verification: %+v, want %d segments verified", st, sealed)
	}
	if st.VerifiedBytes < st.Bytes-activeSeg(l).visibleEnd.Load() {
		t.Fatalf("verified %d bytes of %d sealed", st.VerifiedBytes, st.Bytes-activeSeg(l).visibleEnd.Load())
	}
	checkPrefix(t, readAll(t, l), 0)
	appendN(t, l, 600, 1)
}

// A read that reaches the damaged record before the verifier does (here
// there is none: TrustIndexes) fails the same way and takes the log
// offline: what it returned before is a gapless prefix ending just before
// the damaged record, and nothing after it is served, from any offset.
func TestAReadThatHitsDamageFirstTakesTheLogOffline(t *testing.T) {
	mem := vfs.NewMem()
	segs := sealedLog(t, mem, 600)
	pos := midRecordPos(t, mem, segs[1])
	flip(t, mem, segs[1], pos)
	o := testOptions(mem, OnCommit())
	o.TrustIndexes = true
	l := mustOpen(t, o)
	defer l.Close()
	if l.Offline() != nil {
		t.Fatal("offline before anything read the damage")
	}
	next, err := readUntilError(l)
	checkOfflineAt(t, err, segs[1], pos)
	if next == 0 || next >= l.End() {
		t.Fatalf("the read stopped at offset %d of [0, %d)", next, l.End())
	}
	_, _, err = l.Read(l.End()-1, 1000, nil)
	checkOfflineAt(t, err, segs[1], pos)
	_, err = l.Append([]Entry{{Value: []byte("after")}}, 1, nil)
	checkOfflineAt(t, err, segs[1], pos)
}

// readUntilError reads from the start, checking every record it gets is the
// next one, and returns the offset it stopped at and the error.
func readUntilError(l *Log) (int64, error) {
	for from := int64(0); ; {
		b, next, err := l.Read(from, 1000, nil)
		if err != nil {
			return from, err
		}
		it := segment.NewIter(b)
		for r, ok := it.Next(); ok; r, ok = it.Next() {
			if r.Offset != from {
				return from, errors.New("a gap")
			}
			from++
		}
		if next != from || from == l.End() {
			return from, errors.New("read to the end past the damage")
		}
	}
}

// An index whose checksum holds but whose entry misplaces a record (so a
// read through it could skip records) takes the log offline, naming the
// index file.
func TestAnIndexThatMisplacesARecordTakesTheLogOffline(t *testing.T) {
	mem := vfs.NewMem()
	segs := sealedLog(t, mem, 600)
	path := filepath.Join(testDir, segment.IndexName(baseOf(filepath.Base(segs[1]))))
	b := readFile(t, mem, path)
	ix, err := segment.DecodeIndex(b)
	if err != nil {
		t.Fatal(err)
	}
	ix.Entries[1].Pos += 2 // still ordered and in range: only the records can tell
	writeFile(t, mem, path, segment.AppendIndex(nil, ix))
	l := mustOpen(t, testOptions(mem, OnCommit()))
	defer l.Close()
	waitVerified(t, l)
	var ce *segment.CorruptionError
	if err := l.Offline(); !errors.As(err, &ce) || ce.File != path || ce.Pos != segment.IndexEntryPos(1) {
		t.Fatalf("offline: %v, want the index %s at entry 1", err, path)
	}
}

// Close stops a verification that is under way (here, one paced at a byte
// a second) instead of waiting for it.
func TestCloseStopsTheVerification(t *testing.T) {
	mem := vfs.NewMem()
	sealedLog(t, mem, 600)
	o := testOptions(mem, OnCommit())
	o.VerifyPacer = NewPacer(1)
	l := mustOpen(t, o)
	closed := make(chan error, 1)
	go func() { closed <- l.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(verifyDeadline):
		t.Fatal("Close waited for the verification")
	}
	if st := l.Stats(); st.VerifiedSegments != 0 || st.Offline {
		t.Fatalf("a byte a second verified something: %+v", st)
	}
}

func readFile(t *testing.T, fs vfs.FS, path string) []byte {
	t.Helper()
	f, err := fs.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	size, _ := f.Size()
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, fs vfs.FS, path string, b []byte) {
	t.Helper()
	if err := fs.Remove(path); err != nil {
		t.Fatal(err)
	}
	f, err := fs.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAtSync(b, 0); err != nil {
		t.Fatal(err)
	}
	if err := fs.SyncDir(testDir); err != nil {
		t.Fatal(err)
	}
}

// A sealed segment that lost its last records (its file cut short: the
// open takes its size for where its records end) is found by the verifier,
// which takes the log offline; with no verifier, a read that reaches the
// cut fails the same way instead of stepping over the missing records to
// the next segment.
func TestASealedSegmentCutShortTakesTheLogOffline(t *testing.T) {
	for _, verify := range []bool{true, false} {
		mem := vfs.NewMem()
		segs := sealedLog(t, mem, 600)
		cut := midRecordPos(t, mem, segs[1]) - segment.RecordHeaderSize - 3 // the start of a record
		f, err := mem.OpenReadWrite(segs[1])
		if err != nil {
			t.Fatal(err)
		}
		f.Truncate(cut)
		f.Sync()
		f.Close()
		o := testOptions(mem, OnCommit())
		o.TrustIndexes = !verify
		l := mustOpen(t, o)
		if verify {
			waitVerified(t, l)
			checkOfflineAt(t, l.Offline(), segs[1], cut)
		}
		next, err := readUntilError(l)
		checkOfflineAt(t, err, segs[1], cut)
		if !verify && (next == 0 || next >= baseOf(filepath.Base(segs[2]))) {
			t.Fatalf("the reads stopped at offset %d, not in %s", next, segs[1])
		}
		l.Close()
	}
}

// Whatever let a dense (not compacted) segment's records stop short of the
// next segment's base, a read does not step over the missing offsets to
// serve what follows, as it does over a gap compaction left: the log goes
// offline. (The state is set by hand here: the open's and the lazy loads'
// checks catch every way the test above could make it.)
func TestAReadNeverStepsOverMissingRecordsInADenseSegment(t *testing.T) {
	mem := vfs.NewMem()
	segs := sealedLog(t, mem, 600)
	o := testOptions(mem, OnCommit())
	o.TrustIndexes = true
	l := mustOpen(t, o)
	defer l.Close()
	checkPrefix(t, readAll(t, l), 0)
	cut := midRecordPos(t, mem, segs[1]) - segment.RecordHeaderSize - 3
	(*l.segs.Load())[1].visibleEnd.Store(cut)
	_, err := readUntilError(l)
	checkOfflineAt(t, err, segs[1], cut)
}

// A compaction that reads a sealed segment whose last records were zeroed
// (a sealed scan takes trailing zeros for the end of the data) refuses and
// takes the log offline, rather than commit parts without those records.
func TestCompactingADamagedSegmentTakesTheLogOffline(t *testing.T) {
	mem := vfs.NewMem()
	segs := sealedLog(t, mem, 600)
	cut := midRecordPos(t, mem, segs[1]) - segment.RecordHeaderSize - 3 // the start of a record
	size, _ := mem.Stat(segs[1])
	f, err := mem.OpenReadWrite(segs[1])
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAtSync(make([]byte, size-cut), cut)
	f.Close()
	o := testOptions(mem, OnCommit())
	o.TrustIndexes = true // no verifier to get there first
	l := mustOpen(t, o)
	defer l.Close()
	_, err = l.PrepareCompaction(func(*segment.Record) bool { return true })
	checkOfflineAt(t, err, segs[1], cut)
	names, _ := mem.List(testDir)
	for _, n := range names {
		if isPartName(n) {
			t.Fatalf("a compacted part was left: %s", n)
		}
	}
}

// A sealed segment whose index is missing (a machine crash can take an
// index file: sealing does not sync the directory after writing it) is
// verified by a scan through the pacer, which then writes the index: it is
// not rebuilt at once, unpaced, before the pacer lets the scan go.
func TestTheVerifierRebuildsAMissingIndexThroughThePacer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := vfs.NewMem()
		segs := sealedLog(t, mem, 600)
		newest := filepath.Join(testDir, segment.IndexName(baseOf(filepath.Base(segs[len(segs)-2]))))
		if err := mem.Remove(newest); err != nil {
			t.Fatal(err)
		}
		o := testOptions(mem, OnCommit())
		o.VerifyPacer = NewPacer(1 << 10) // 1 KiB/s: a 4 KiB segment takes seconds
		l := mustOpen(t, o)
		defer l.Close()
		synctest.Wait() // the verifier waits for the pacer
		if _, err := mem.Stat(newest); err == nil {
			t.Fatal("the index was rebuilt before the pacer let its scan read the segment")
		}
		<-l.Verified()
		if _, err := segment.DecodeIndex(readFile(t, mem, newest)); err != nil {
			t.Fatalf("after the verification the index: %v", err)
		}
		if st := l.Stats(); st.VerifiedSegments != int64(len(segs)-1) || st.Offline {
			t.Fatalf("after the verification: %+v", st)
		}
	})
}
