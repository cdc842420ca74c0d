package shardlog

import (
	"errors"
	"testing"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// A record larger than the first read window is read again whole, with
// one byte of the next record: when that byte is zero (its header sum's
// low byte, one record in 256) the read must still return the record, not
// a corruption.
func TestARecordFollowedByAZeroByteReadsWhole(t *testing.T) {
	l := mustOpen(t, Options{FS: vfs.NewMem(), Dir: testDir, Fsync: None(), IndexIntervalBytes: 256})
	defer l.Close()
	big := make([]byte, 2000) // larger than the first window (1 + 256 + overhead)
	if _, err := l.AppendWait([]Entry{{Key: []byte("k"), Value: big, Timestamp: 1}}, 1); err != nil {
		t.Fatal(err)
	}
	// Choose the next record's timestamp so its first byte is zero.
	ts := int64(1)
	for ; ; ts++ {
		rec := segment.AppendRecordParts(nil, 1, 1, 0, ts, []byte("k"), big)
		if rec[0] == 0 {
			break
		}
	}
	if _, err := l.AppendWait([]Entry{{Key: []byte("k"), Value: big, Timestamp: ts}}, 1); err != nil {
		t.Fatal(err)
	}
	out, next, err := l.Read(0, 1, nil)
	if err != nil || next != 1 {
		t.Fatalf("read of the record before a zero byte: next %d, %v", next, err)
	}
	it := segment.NewIter(out)
	if r, ok := it.Next(); !ok || r.Offset != 0 || len(r.Value) != len(big) {
		t.Fatalf("record %+v (ok %v)", r.Offset, ok)
	}
}

// A read of a closed log fails with ErrClosed; it does not wait for
// segments that will never come back.
func TestAReadOfAClosedLogFails(t *testing.T) {
	l := mustOpen(t, testOptions(vfs.NewMem(), OnCommit()))
	appendN(t, l, 0, 3)
	l.Close()
	if _, _, err := l.Read(0, 100, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("read after close: %v", err)
	}
}
