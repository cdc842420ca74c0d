package segment

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// buildSegment returns a segment image with n records starting at base,
// followed by pad zero bytes (a preallocated file), and the start position
// of every record.
func buildSegment(base int64, n, pad int) ([]byte, []int) {
	b := AppendHeader(nil, Header{Base: base, Created: 1})
	var starts []int
	for i := range n {
		starts = append(starts, len(b))
		r := Record{Offset: base + int64(i), Generation: 1, Timestamp: int64(100 + i),
			Key: fmt.Appendf(nil, "k%d", i), Value: bytes.Repeat([]byte{byte('a' + i%26)}, 10+i*7)}
		b = AppendRecord(b, &r)
	}
	return append(b, make([]byte, pad)...), starts
}

func scanBytes(b []byte, sealed bool) (Summary, error) {
	return Scan(bytes.NewReader(b), int64(len(b)), ScanOptions{Name: "test.seg", Sealed: sealed, IndexIntervalBytes: 64})
}

func TestScanSummarisesACleanSegment(t *testing.T) {
	for _, pad := range []int{0, 4096} {
		img, starts := buildSegment(100, 20, pad)
		sum, err := scanBytes(img, false)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Records != 20 || sum.Next != 120 || sum.End != int64(len(img)-pad) || sum.Torn || sum.MaxTimestamp != 119 {
			t.Fatalf("pad %d: %+v", pad, sum)
		}
		ix := IndexOf(&sum)
		for i, start := range starts {
			if p := ix.PosOf(100 + int64(i)); p > int64(start) || p < HeaderSize {
				t.Fatalf("PosOf(%d) = %d, record starts at %d", 100+i, p, start)
			}
		}
	}
}

// Truncating the last record at every byte leaves exactly the records before
// it, reported as a torn tail; so does zero-filling its end (a preallocated
// file where the write was cut short).
func TestATornLastRecordIsCutAtEveryByte(t *testing.T) {
	img, starts := buildSegment(0, 5, 0)
	last := starts[len(starts)-1]
	for cut := last + 1; cut < len(img); cut++ {
		for _, zeroFill := range []bool{false, true} {
			b := append([]byte(nil), img[:cut]...)
			if zeroFill {
				b = append(b, make([]byte, len(img)-cut+512)...)
			}
			sum, err := scanBytes(b, false)
			if err != nil {
				t.Fatalf("cut at %d (zero fill %v): %v", cut, zeroFill, err)
			}
			if sum.Records != 4 || sum.End != int64(last) || !sum.Torn {
				t.Fatalf("cut at %d (zero fill %v): %+v", cut, zeroFill, sum)
			}
		}
	}
	// Cut exactly at a record boundary: a clean end, nothing torn.
	sum, err := scanBytes(img[:last], false)
	if err != nil || sum.Records != 4 || sum.Torn {
		t.Fatalf("cut at a boundary: %+v %v", sum, err)
	}
}

// A flipped bit anywhere in a record that has another record after it is
// corruption, never a torn tail.
func TestAFlippedBitInAnInteriorRecordIsCorruption(t *testing.T) {
	img, starts := buildSegment(0, 4, 256)
	interiorEnd := starts[len(starts)-1]
	for pos := HeaderSize; pos < interiorEnd; pos++ {
		b := append([]byte(nil), img...)
		b[pos] ^= 0x04
		_, err := scanBytes(b, false)
		var ce *CorruptionError
		if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flip at %d: got %v, want a CorruptionError", pos, err)
		}
		if ce.File != "test.seg" || ce.Pos > int64(pos) {
			t.Fatalf("flip at %d reported at %d in %q", pos, ce.Pos, ce.File)
		}
	}
}

func TestAFlippedBitInTheLastRecordIsCorruptionNotATear(t *testing.T) {
	img, starts := buildSegment(0, 3, 128)
	last := starts[len(starts)-1]
	end := len(img) - 128
	for pos := last; pos < end; pos++ {
		b := append([]byte(nil), img...)
		b[pos] ^= 0x80
		_, err := scanBytes(b, false)
		// The record's last byte is still non-zero, so nothing proves an
		// unfinished write: the damage must be refused.
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flip at %d of the last record: got %v, want corruption", pos, err)
		}
	}
}

func TestAnyDamageInASealedSegmentIsCorruption(t *testing.T) {
	img, starts := buildSegment(0, 3, 0)
	if _, err := scanBytes(img[:len(img)-3], true); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated sealed segment: %v", err)
	}
	b := append([]byte(nil), img...)
	b[starts[2]+RecordHeaderSize] ^= 1
	if _, err := scanBytes(b, true); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("flipped sealed segment: %v", err)
	}
	// Trailing zeros are not damage: a seal whose truncate was lost.
	if sum, err := scanBytes(append(img, make([]byte, 100)...), true); err != nil || sum.Records != 3 {
		t.Fatalf("zero padded sealed segment: %+v %v", sum, err)
	}
}

func TestAMissingHeaderIsReportedOnlyWhenNothingFollows(t *testing.T) {
	for _, n := range []int{0, 10, HeaderSize, 4096} {
		if _, err := scanBytes(make([]byte, n), false); !errors.Is(err, ErrHeaderMissing) {
			t.Fatalf("%d zero bytes: got %v, want ErrHeaderMissing", n, err)
		}
	}
	torn := AppendHeader(nil, Header{Base: 5})[:30]
	if _, err := scanBytes(torn, false); !errors.Is(err, ErrHeaderMissing) && !errors.Is(err, ErrCorrupt) {
		t.Fatalf("half a header: %v", err)
	}
	b := make([]byte, 4096)
	b[1000] = 1
	if _, err := scanBytes(b, false); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("zero header with data after it: %v", err)
	}
	if _, err := scanBytes(make([]byte, 100), true); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("sealed segment without a header: %v", err)
	}
}

func TestScanRefusesOffsetsThatDoNotFollow(t *testing.T) {
	b := AppendHeader(nil, Header{Base: 10})
	r := Record{Offset: 10, Generation: 2}
	b = AppendRecord(b, &r)
	r.Offset = 12
	gap := AppendRecord(append([]byte(nil), b...), &r)
	if _, err := scanBytes(gap, false); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("offset gap: %v", err)
	}
	r.Offset, r.Generation = 11, 1
	back := AppendRecord(append([]byte(nil), b...), &r)
	if _, err := scanBytes(back, false); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("generation going back: %v", err)
	}
}

func TestScanVisitsEveryRecordInOrder(t *testing.T) {
	img, starts := buildSegment(7, 9, 0)
	var seen []int64
	_, err := Scan(bytes.NewReader(img), int64(len(img)), ScanOptions{Visit: func(pos int64, r *Record) error {
		if pos != int64(starts[len(seen)]) {
			return fmt.Errorf("record %d at %d, want %d", r.Offset, pos, starts[len(seen)])
		}
		seen = append(seen, r.Offset)
		return nil
	}})
	if err != nil || len(seen) != 9 || seen[0] != 7 || seen[8] != 15 {
		t.Fatalf("visited %v, err %v", seen, err)
	}
}

func TestScanHandlesRecordsLargerThanItsChunk(t *testing.T) {
	b := AppendHeader(nil, Header{Base: 0})
	for i := range 3 {
		r := Record{Offset: int64(i), Value: bytes.Repeat([]byte{1}, scanChunkBytes+1000)}
		b = AppendRecord(b, &r)
	}
	sum, err := scanBytes(b, false)
	if err != nil || sum.Records != 3 || sum.End != int64(len(b)) {
		t.Fatalf("%+v %v", sum, err)
	}
}

func TestIterStopsAtTheFirstBadRecord(t *testing.T) {
	img, starts := buildSegment(0, 3, 0)
	body := append([]byte(nil), img[HeaderSize:]...)
	body[starts[2]-HeaderSize+RecordHeaderSize] ^= 1
	it := NewIter(body)
	n := 0
	for _, ok := it.Next(); ok; _, ok = it.Next() {
		n++
	}
	if n != 2 || !errors.Is(it.Err(), ErrBodyChecksum) {
		t.Fatalf("iterated %d records, err %v", n, it.Err())
	}
}

// Past the recovery point the page cache may have written a later page
// before an earlier one: a hole followed by data is an unfinished write,
// not corruption. Before it, the same hole is corruption.
func TestAHolePastTheRecoveryPointIsATornTail(t *testing.T) {
	img, starts := buildSegment(0, 6, 0)
	hole := append([]byte(nil), img...)
	clear(hole[starts[3] : starts[3]+20])
	sum, err := Scan(bytes.NewReader(hole), int64(len(hole)), ScanOptions{TornAfter: int64(starts[2])})
	if err != nil || !sum.Torn || sum.Records != 3 || sum.End != int64(starts[3]) {
		t.Fatalf("hole past the recovery point: %+v %v", sum, err)
	}
	if _, err := Scan(bytes.NewReader(hole), int64(len(hole)), ScanOptions{TornAfter: int64(starts[4])}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("hole before the recovery point: %v", err)
	}
}

// A compacted segment (header flag bit 0) may skip offsets, never go back;
// any other segment must stay dense; an unknown header flag refuses it.
func TestOnlyACompactedSegmentMaySkipOffsets(t *testing.T) {
	build := func(flags uint32, offsets ...int64) []byte {
		b := AppendHeader(nil, Header{Base: 10, Created: 1, Flags: flags})
		for _, off := range offsets {
			r := Record{Offset: off, Generation: 1, Timestamp: off, Key: []byte("k"), Value: []byte("v")}
			b = AppendRecord(b, &r)
		}
		return b
	}
	sum, err := scanBytes(build(HeaderFlagCompacted, 12, 13, 40), true)
	if err != nil || sum.Records != 3 || sum.Next != 41 || sum.Header.Flags != HeaderFlagCompacted {
		t.Fatalf("compacted with gaps: %+v, %v", sum, err)
	}
	if sum.Index[0].RelOffset != 2 {
		t.Fatalf("first index entry at relative offset %d, want 2", sum.Index[0].RelOffset)
	}
	if sum, err := scanBytes(build(HeaderFlagCompacted), true); err != nil || sum.Next != 10 || sum.Records != 0 {
		t.Fatalf("empty compacted segment: %+v, %v", sum, err)
	}
	for _, tc := range []struct {
		flags   uint32
		offsets []int64
	}{
		{0, []int64{10, 12}},
		{HeaderFlagCompacted, []int64{9}},
		{HeaderFlagCompacted, []int64{12, 12}},
		{HeaderFlagCompacted, []int64{12, 11}},
		{1 << 1, []int64{10}},
	} {
		if _, err := scanBytes(build(tc.flags, tc.offsets...), true); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flags %#x offsets %v: %v, want corruption", tc.flags, tc.offsets, err)
		}
	}
	h, err := DecodeHeader(AppendHeader(nil, Header{Base: 5, Created: 6, Flags: HeaderFlagCompacted}))
	if err != nil || h != (Header{Base: 5, Created: 6, Flags: HeaderFlagCompacted}) {
		t.Fatalf("round trip: %+v, %v", h, err)
	}
}
