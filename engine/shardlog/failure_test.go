package shardlog

import (
	"errors"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
	"github.com/felixbroker/felix/segment/vfs/errorfs"
)

// recordingWaiter collects every acknowledgement.
type recordingWaiter struct {
	mu   sync.Mutex
	done map[int64]error
	wg   sync.WaitGroup
}

func (r *recordingWaiter) Committed(first, last int64, err error) {
	r.mu.Lock()
	for o := first; o <= last; o++ {
		r.done[o] = err
	}
	r.mu.Unlock()
	r.wg.Done()
}

// EIO on the fdatasync of a group commit acknowledges nobody in that batch,
// poisons the log, and leaves acknowledged records readable.
func TestEIOOnASyncAcknowledgesNobodyInThatBatch(t *testing.T) {
	efs := errorfs.Wrap(vfs.NewMem())
	o := testOptions(efs, OnCommit())
	o.SegmentBytes = 1 << 20
	l := mustOpen(t, o)
	defer l.Close()
	appendN(t, l, 0, 10)
	efs.Inject(errorfs.Rule{Op: errorfs.WriteSync, PathContains: segment.SegmentSuffix, Nth: 1, Err: syscall.EIO})
	rw := &recordingWaiter{done: map[int64]error{}}
	for i := int64(10); i < 40; i++ {
		rw.wg.Add(1)
		if _, err := l.Append([]Entry{{Key: key(i), Value: value(i)}}, 1, rw); err != nil {
			rw.wg.Done()
			if !errors.Is(err, ErrPoisoned) {
				t.Fatalf("append %d refused with %v", i, err)
			}
		}
	}
	rw.wg.Wait()
	for off, err := range rw.done {
		if err == nil {
			t.Fatalf("record %d acknowledged although its sync failed", off)
		}
		if !errors.Is(err, syscall.EIO) || !errors.Is(err, ErrPoisoned) {
			t.Fatalf("record %d failed with %v; want EIO and ErrPoisoned", off, err)
		}
	}
	if _, err := l.AppendWait([]Entry{{Value: []byte("after")}}, 1); !errors.Is(err, ErrPoisoned) {
		t.Fatalf("append after a failed sync: %v", err)
	}
	if l.End() != 10 {
		t.Fatalf("end moved to %d after a failed sync", l.End())
	}
	checkPrefix(t, readAll(t, l), 0) // reads keep working
}

// A failed Periodic fsync poisons the log too.
func TestAFailedPeriodicSyncPoisonsTheLog(t *testing.T) {
	efs := errorfs.Wrap(vfs.NewMem())
	l := mustOpen(t, testOptions(efs, Periodic(0)))
	defer l.Close()
	efs.Inject(errorfs.Rule{Op: errorfs.Sync, PathContains: segment.SegmentSuffix, Err: syscall.EIO})
	appendN(t, l, 0, 5)
	if err := l.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Sync: %v", err)
	}
}

// ENOSPC is a clear error; acknowledged records stay readable; once space
// is back, reopening the log from disk serves appends again. The append
// whose write failed may be in the log (ENOSPC and ErrPoisoned, not
// ErrNoSpace); the appends refused after it are not (ErrNoSpace).
func TestNoSpaceIsAClearErrorAndReadsKeepWorking(t *testing.T) {
	mem := vfs.NewMem()
	efs := errorfs.Wrap(mem)
	o := testOptions(efs, OnCommit())
	l := mustOpen(t, o)
	appendN(t, l, 0, 20)
	efs.Inject(errorfs.Rule{Op: errorfs.Any, PathContains: segment.SegmentSuffix, Err: syscall.ENOSPC})
	var err error
	for i := int64(20); i < 200 && err == nil; i++ {
		_, err = l.AppendWait([]Entry{{Key: key(i), Value: value(i)}}, 1)
	}
	if !errors.Is(err, ErrPoisoned) || !errors.Is(err, syscall.ENOSPC) || errors.Is(err, ErrNoSpace) {
		t.Fatalf("the append whose write failed on a full disk: %v", err)
	}
	if _, err := l.AppendWait([]Entry{{Value: []byte("refused")}}, 1); !errors.Is(err, ErrNoSpace) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("an append after the failure: %v", err)
	}
	efs.Clear()
	end := l.End()
	checkPrefix(t, readAll(t, l), 0)
	l.Close()
	l2 := mustOpen(t, o)
	defer l2.Close()
	if l2.End() != end {
		t.Fatalf("reopened at %d, had %d", l2.End(), end)
	}
	appendN(t, l2, end, 5)
}

// A short write of a flush is a failure, never a partial acknowledgement.
func TestAShortWriteAcknowledgesNothing(t *testing.T) {
	efs := errorfs.Wrap(vfs.NewMem())
	l := mustOpen(t, testOptions(efs, None()))
	defer l.Close()
	efs.Inject(errorfs.Rule{Op: errorfs.Write, PathContains: segment.SegmentSuffix, Nth: 1, ShortBy: 3})
	if _, err := l.AppendWait([]Entry{{Value: []byte("a record")}}, 1); err == nil {
		t.Fatal("a short write was acknowledged")
	}
}

// Truncating the log's file at every byte of its last record recovers the
// exact prefix of whole records.
func TestTruncationAtEveryByteOfTheLastRecordRecoversThePrefix(t *testing.T) {
	mem := vfs.NewMem()
	o := testOptions(mem, OnCommit())
	o.SegmentBytes = 1 << 20
	l := mustOpen(t, o)
	appendN(t, l, 0, 6)
	l.Close()
	path := filepath.Join(testDir, segment.SegmentName(0))
	size, _ := mem.Stat(path)
	last := int64(segment.RecordSize(len(key(5)), len(value(5))))
	for cut := size - last; cut < size; cut++ {
		img := mem.Crash(vfs.DropUnsynced)
		f, _ := img.OpenReadWrite(path)
		f.Truncate(cut)
		f.Sync()
		f.Close()
		l := mustOpen(t, testOptions(img, OnCommit()))
		recs := readAll(t, l)
		if len(recs) != 5 {
			t.Fatalf("cut at %d: %d records", cut, len(recs))
		}
		checkPrefix(t, recs, 0)
		l.Close()
	}
}

// A flipped bit in any record of a cleanly closed log is found, and the
// error names the file and the byte. In the active segment, or among the
// last records of a sealed one (what Open reads of it), it refuses the
// open; anywhere else in a sealed segment the background verification
// finds it and takes the log offline (verify.go).
func TestAFlippedBitInAnyRecordIsFoundNamingFileAndByte(t *testing.T) {
	mem := vfs.NewMem()
	o := testOptions(mem, OnCommit())
	l := mustOpen(t, o)
	appendN(t, l, 0, 60)
	l.Close()
	segs := segmentBases(t, mem)
	offline := 0
	for i, base := range segs {
		path := filepath.Join(testDir, segment.SegmentName(base))
		size, _ := mem.Stat(path)
		for pos := int64(segment.HeaderSize); pos < size; pos += 7 {
			img := mem.Crash(vfs.DropUnsynced)
			flip(t, img, path, pos)
			opened, err := openFindingDamage(t, img)
			if opened && i == len(segs)-1 {
				t.Fatalf("flip at %s:%d in the active segment did not refuse the open", path, pos)
			}
			if opened {
				offline++
			}
			var ce *segment.CorruptionError
			if !errors.As(err, &ce) || ce.File != path || ce.Pos > pos {
				t.Fatalf("flip at %s:%d: got %v", path, pos, err)
			}
		}
	}
	if offline == 0 {
		t.Fatal("every flip refused the open: the background verification found nothing")
	}
}

// openFindingDamage opens the log in fs and returns Open's error or, when
// it opened, the error its background verification took it offline with
// (nil if none).
func openFindingDamage(t *testing.T, fs vfs.FS) (opened bool, err error) {
	l, err := Open(testOptions(fs, OnCommit()))
	if err != nil {
		return false, err
	}
	defer l.Close()
	waitVerified(t, l)
	return true, l.Offline()
}

func flip(t *testing.T, fs vfs.FS, path string, pos int64) {
	t.Helper()
	f, err := fs.OpenReadWrite(path)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	f.ReadAt(b, pos)
	b[0] ^= 0x10
	f.WriteAtSync(b, pos)
	f.Close()
}

// Opening again after any stop changes nothing.
func TestReopenIsIdempotent(t *testing.T) {
	mem := vfs.NewMem()
	o := testOptions(mem, Periodic(0))
	l := mustOpen(t, o)
	appendN(t, l, 0, 150)
	l.Close()
	for range 3 {
		l := mustOpen(t, o)
		if l.End() != 150 || l.Recovery().TornBytes != 0 || len(l.Recovery().RemovedFiles) != 0 {
			t.Fatalf("reopen: end %d recovery %+v", l.End(), l.Recovery())
		}
		checkPrefix(t, readAll(t, l), 0)
		l.Close()
	}
}
