package segment

import (
	"bytes"
	"testing"
)

func TestAnIndexRoundTripsAndAnswersSeeks(t *testing.T) {
	img, starts := buildSegment(1000, 50, 0)
	sum, err := scanBytes(img, true)
	if err != nil {
		t.Fatal(err)
	}
	enc := AppendIndex(nil, IndexOf(&sum))
	ix, err := DecodeIndex(enc)
	if err != nil {
		t.Fatal(err)
	}
	if ix.Base != 1000 || ix.Next != 1050 || ix.DataEnd != int64(len(img)) || len(ix.Entries) != len(sum.Index) {
		t.Fatalf("%+v", ix)
	}
	for i, start := range starts {
		if p := ix.PosOf(1000 + int64(i)); p > int64(start) {
			t.Fatalf("PosOf(%d) = %d past its record at %d", 1000+i, p, start)
		}
		// Timestamps are 100+i: a time seek must land at or before record i.
		if p := ix.PosOfTime(int64(100 + i)); p > int64(start) {
			t.Fatalf("PosOfTime(%d) = %d past its record at %d", 100+i, p, start)
		}
	}
}

func TestAnyDamageToAnIndexIsDetected(t *testing.T) {
	enc := goldenIndex()
	for pos := range enc {
		b := append([]byte(nil), enc...)
		b[pos] ^= 0x20
		if _, err := DecodeIndex(b); err == nil {
			t.Fatalf("flip at byte %d went unnoticed", pos)
		}
	}
	for n := range len(enc) {
		if _, err := DecodeIndex(enc[:n]); err == nil {
			t.Fatalf("index truncated to %d bytes went unnoticed", n)
		}
	}
}

func TestAnIndexWithEntriesOutOfOrderIsRefused(t *testing.T) {
	ix := &Index{Base: 0, DataEnd: 1000, Next: 10, Entries: []IndexEntry{{RelOffset: 5, Pos: 500}, {RelOffset: 2, Pos: 600}}}
	if _, err := DecodeIndex(AppendIndex(nil, ix)); err == nil {
		t.Fatal("entries out of order were accepted")
	}
	ix.Entries = []IndexEntry{{RelOffset: 20, Pos: 64}}
	if _, err := DecodeIndex(AppendIndex(nil, ix)); err == nil {
		t.Fatal("an entry past Next was accepted")
	}
}

func TestTheIndexMarksEveryGenerationChange(t *testing.T) {
	b := AppendHeader(nil, Header{Base: 0})
	gens := []uint32{1, 1, 1, 2, 2, 5, 5, 5}
	for i, g := range gens {
		r := Record{Offset: int64(i), Generation: g}
		b = AppendRecord(b, &r)
	}
	sum, err := Scan(bytes.NewReader(b), int64(len(b)), ScanOptions{IndexIntervalBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	ix := IndexOf(&sum)
	for gen, want := range map[uint32]int64{1: 3, 2: 5, 3: 5, 4: 5} {
		if end, ok := ix.GenerationEnd(gen); !ok || end != want {
			t.Fatalf("GenerationEnd(%d) = %d, %v; want %d", gen, end, ok, want)
		}
	}
	if _, ok := ix.GenerationEnd(5); ok {
		t.Fatal("GenerationEnd(5) found a later generation")
	}
}

// An index's head (header and last entry) says what the whole index says,
// reading 72 bytes of it.
func TestAnIndexHeadAgreesWithTheWholeIndex(t *testing.T) {
	img, _ := buildSegment(1000, 50, 0)
	sum, err := scanBytes(img, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, enc := range [][]byte{goldenIndex(), AppendIndex(nil, IndexOf(&sum))} {
		ix, err := DecodeIndex(enc)
		if err != nil {
			t.Fatal(err)
		}
		h, err := ReadIndexHead(bytes.NewReader(enc), int64(len(enc)))
		if err != nil {
			t.Fatal(err)
		}
		want := IndexHead{Base: ix.Base, DataEnd: ix.DataEnd, Next: ix.Next, Entries: len(ix.Entries)}
		if len(ix.Entries) > 0 {
			want.Last = ix.Entries[len(ix.Entries)-1]
		}
		if h != want {
			t.Fatalf("head %+v, index %+v", h, want)
		}
	}
}

// The head is not covered by a checksum it can check, so what it can
// check it does: the format, a size that matches the entry count, and a
// last entry inside the segment it describes.
func TestAnIndexHeadRefusesWhatItCanSeeIsWrong(t *testing.T) {
	enc := goldenIndex()
	size := int64(len(enc))
	bad := map[string][]byte{
		"magic":       flipAt(enc, 0),
		"version":     flipAt(enc, 8),
		"entry count": flipAt(enc, 40),
		"last entry":  flipAt(enc, int(IndexEntryPos(1))+5), // its position, past the data end
		"reserved":    flipAt(enc, int(IndexEntryPos(1))+12),
	}
	for what, b := range bad {
		if _, err := ReadIndexHead(bytes.NewReader(b), size); err == nil {
			t.Errorf("a damaged %s went unnoticed", what)
		}
	}
	for _, n := range []int64{size - 1, size + 1, 0} {
		if _, err := ReadIndexHead(bytes.NewReader(enc), n); err == nil {
			t.Errorf("an index of %d bytes read as one of %d", len(enc), n)
		}
	}
}

func flipAt(b []byte, pos int) []byte {
	out := append([]byte(nil), b...)
	out[pos] ^= 0x80
	return out
}
