package shardlog

import (
	"errors"
	"syscall"
	"testing"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
	"github.com/felixbroker/felix/segment/vfs/errorfs"
)

// fillDisk makes efs behave as a full disk: every call that needs new
// space fails with ENOSPC; overwrites, syncs, renames and removals pass.
func fillDisk(efs *errorfs.FS) {
	for _, op := range []errorfs.OpKind{errorfs.Create, errorfs.Preallocate, errorfs.Write, errorfs.WriteSync} {
		efs.Inject(errorfs.Rule{Op: op, PathContains: testDir, Err: syscall.ENOSPC})
	}
}

// appendUntilFailed appends records from next on until one fails, and
// returns the offset after the last acknowledged one.
func appendUntilFailed(t *testing.T, l *Log, next int64) int64 {
	t.Helper()
	for limit := next + 1000; next < limit; next++ {
		if _, err := l.AppendWait([]Entry{{Key: key(next), Value: value(next)}}, 1); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("append %d on a full disk: %v", next, err)
			}
			return next
		}
	}
	t.Fatal("a thousand appends on a full disk and none failed")
	return 0
}

// A log poisoned by a full disk is not reopened while the disk is still
// full (ErrNoSpace, the old log still failed and readable); once space is
// back, Reopen returns a log that holds every acknowledged record, accepts
// appends again, and a restart finds all of it.
func TestReopenAfterSpaceIsBackServesAppendsAndKeepsEveryAcknowledgedRecord(t *testing.T) {
	for _, mode := range []FsyncMode{OnCommit(), None(), Periodic(0)} {
		t.Run(mode.String(), func(t *testing.T) {
			mem := vfs.NewMem()
			efs := errorfs.Wrap(mem)
			o := testOptions(efs, mode)
			l := mustOpen(t, o)
			appendN(t, l, 0, 30)
			fillDisk(efs)
			acked := appendUntilFailed(t, l, 30)
			if _, err := l.Reopen(); !errors.Is(err, ErrNoSpace) {
				t.Fatalf("Reopen on a full disk: %v; want ErrNoSpace", err)
			}
			if _, err := l.AppendWait([]Entry{{Value: []byte("x")}}, 1); !errors.Is(err, ErrNoSpace) {
				t.Fatalf("an append after a refused Reopen: %v", err)
			}
			checkPrefix(t, readAll(t, l), 0)
			efs.Clear()
			n, err := l.Reopen()
			if err != nil {
				t.Fatalf("Reopen once space is back: %v", err)
			}
			checkPrefix(t, readAll(t, l), 0) // the old log serves reads until it is closed
			l.Close()
			if n.End() < acked {
				t.Fatalf("the reopened log ends at %d; %d were acknowledged", n.End(), acked)
			}
			recs := readAll(t, n)
			checkPrefix(t, recs[:acked], 0)
			appendN(t, n, n.End(), 40) // across a rollover or more
			end := n.End()
			n.Close()
			r := mustOpen(t, testOptions(mem, mode))
			defer r.Close()
			if r.End() != end {
				t.Fatalf("a restart ends at %d, the reopened log at %d", r.End(), end)
			}
		})
	}
}

// A rollover whose new segment cannot reserve its space (ENOSPC on
// preallocation) is refused before any record is written into it: the
// records bound for it are refused with ErrNoSpace, the file is removed
// again, and nothing of them is found after a restart.
func TestARolloverThatCannotReserveItsSegmentIsRefusedBeforeAnyRecordIsWrittenIntoIt(t *testing.T) {
	mem := vfs.NewMem()
	efs := errorfs.Wrap(mem)
	l := mustOpen(t, testOptions(efs, OnCommit()))
	before := fillSegment(t, l)
	efs.Inject(errorfs.Rule{Op: errorfs.Preallocate, PathContains: segment.SegmentSuffix, Err: syscall.ENOSPC})
	_, err := l.AppendWait([]Entry{{Key: key(before), Value: value(before)}}, 1)
	if !errors.Is(err, ErrNoSpace) {
		t.Fatalf("an append whose segment could not be reserved: %v; want ErrNoSpace", err)
	}
	l.Close()
	efs.Clear()
	if _, err := mem.Stat(testDir + "/" + segment.SegmentName(before)); !errors.Is(err, vfs.ErrNotExist) {
		t.Fatalf("the refused segment's file is still there: %v", err)
	}
	r := mustOpen(t, testOptions(mem, OnCommit()))
	defer r.Close()
	if r.End() != before {
		t.Fatalf("a restart ends at %d; %d were acknowledged and the rest refused", r.End(), before)
	}
}

// fillSegment appends records as appendN does until the next one would
// not fit the active segment, and returns the next offset.
func fillSegment(t *testing.T, l *Log) int64 {
	t.Helper()
	for {
		l.mu.Lock()
		next, left := l.next, l.opts.SegmentBytes-l.tail.fillPos
		l.mu.Unlock()
		if left < int64(segment.RecordSize(len(key(next)), len(value(next)))) {
			return next
		}
		appendN(t, l, next, 1)
	}
}
