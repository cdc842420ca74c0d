package segment

import (
	"errors"
	"testing"
)

func TestRecordRoundTripsEveryShape(t *testing.T) {
	cases := []Record{
		{Offset: 0, Timestamp: 1},
		{Offset: 1 << 40, Generation: 1<<32 - 1, Flags: FlagExpiry | FlagControl, Timestamp: -5, Key: []byte("k"), Value: make([]byte, 70000)},
		{Offset: 9, Key: make([]byte, RecordKeyMax), Value: nil},
	}
	for _, want := range cases {
		enc := AppendRecord([]byte("prefix"), &want)[len("prefix"):]
		if len(enc) != want.Size() {
			t.Fatalf("encoded %d bytes, Size says %d", len(enc), want.Size())
		}
		got, n, err := DecodeRecord(enc)
		if err != nil || n != len(enc) {
			t.Fatalf("decode: n=%d err=%v", n, err)
		}
		assertRecordEqual(t, got, want)
		if size, ok := PeekSize(enc); !ok || size != n {
			t.Fatalf("PeekSize = %d, %v; want %d", size, ok, n)
		}
	}
}

func TestDecodeRecordVerdicts(t *testing.T) {
	r := goldenRecord()
	enc := AppendRecord(nil, &r)
	check := func(name string, b []byte, want error) {
		t.Helper()
		if _, _, err := DecodeRecord(b); !errors.Is(err, want) {
			t.Fatalf("%s: got %v, want %v", name, err, want)
		}
	}
	check("short header", enc[:10], ErrShort)
	check("short body", enc[:len(enc)-1], ErrShort)
	check("zero header", make([]byte, 64), ErrZero)
	check("empty", nil, ErrZero)
	for i := range RecordHeaderSize {
		b := append([]byte(nil), enc...)
		b[i] ^= 0x10
		check("flipped header byte", b, ErrHeaderChecksum)
	}
	for i := RecordHeaderSize; i < len(enc); i++ {
		b := append([]byte(nil), enc...)
		b[i] ^= 0x01
		check("flipped body byte", b, ErrBodyChecksum)
	}
}

func TestOversizedRecordsPanicAtTheEncoder(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("a key over RecordKeyMax reached the encoder without a panic")
		}
	}()
	AppendRecordParts(nil, 0, 0, 0, 0, make([]byte, RecordKeyMax+1), nil)
}

func TestAppendRecordDoesNotAllocateWithCapacity(t *testing.T) {
	buf := make([]byte, 0, 4096)
	key, val := []byte("key"), make([]byte, 1024)
	allocs := testing.AllocsPerRun(100, func() {
		buf = AppendRecordParts(buf[:0], 7, 1, 0, 99, key, val)
		if _, _, err := DecodeRecord(buf); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per encode+decode, want 0", allocs)
	}
}

func TestParseNameAcceptsOnlyOurNames(t *testing.T) {
	if b, s, ok := ParseName(SegmentName(81920)); !ok || b != 81920 || s != SegmentSuffix {
		t.Fatalf("segment name: %d %q %v", b, s, ok)
	}
	if b, s, ok := ParseName(IndexName(7)); !ok || b != 7 || s != IndexSuffix {
		t.Fatalf("index name: %d %q %v", b, s, ok)
	}
	for _, bad := range []string{"", "1.seg", "0000000000000000000a.seg", "00000000000000000000.tmp", "-0000000000000000001.seg"} {
		if _, _, ok := ParseName(bad); ok {
			t.Fatalf("%q parsed as a segment name", bad)
		}
	}
}

func BenchmarkAppendRecord1KiB(b *testing.B) {
	buf := make([]byte, 0, 4096)
	key, val := []byte("key-0001"), make([]byte, 1024)
	b.SetBytes(int64(RecordSize(len(key), len(val))))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		buf = AppendRecordParts(buf[:0], int64(i), 1, 0, 99, key, val)
	}
}

func BenchmarkDecodeRecord1KiB(b *testing.B) {
	buf := AppendRecordParts(nil, 1, 1, 0, 99, []byte("key-0001"), make([]byte, 1024))
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := DecodeRecord(buf); err != nil {
			b.Fatal(err)
		}
	}
}
