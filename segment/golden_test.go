package segment

import (
	"bytes"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/segment")

// goldenDir holds the byte-exact vectors of the on-disk format.
const goldenDir = "../testdata/segment"

// goldenRecord is the record every golden vector of a record uses.
func goldenRecord() Record {
	return Record{
		Offset:     42,
		Generation: 3,
		Flags:      FlagTombstone,
		Timestamp:  1_767_225_600_000_000_000, // 2026-01-01T00:00:00Z
		Key:        []byte("user-7"),
		Value:      []byte("hello, felix"),
	}
}

func goldenSegment() []byte {
	b := AppendHeader(nil, Header{Base: 42, Created: 1_767_225_600_000_000_000})
	r := goldenRecord()
	b = AppendRecord(b, &r)
	r.Offset, r.Flags, r.Key, r.Value = 43, 0, nil, []byte("second")
	return AppendRecord(b, &r)
}

func goldenIndex() []byte {
	return AppendIndex(nil, &Index{Base: 42, DataEnd: 4096, Next: 50, Entries: []IndexEntry{
		{RelOffset: 0, Pos: 64, Generation: 1, MaxTimestamp: 10},
		{RelOffset: 5, Pos: 2048, Generation: 2, MaxTimestamp: 20},
	}})
}

// checkGolden compares got with the hex dump in testdata, or rewrites it.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(goldenDir, name+".hex")
	if *update {
		if err := os.WriteFile(path, []byte(hexDump(got)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := readHexDump(path)
	if err != nil {
		t.Fatalf("%v (run go test ./segment -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: encoding changed; the format is frozen\n got: %x\nwant: %x", name, got, want)
	}
}

// hexDump writes 16 bytes a line, so a diff of a vector is readable.
func hexDump(b []byte) string {
	var sb strings.Builder
	for len(b) > 0 {
		n := min(16, len(b))
		sb.WriteString(hex.EncodeToString(b[:n]))
		sb.WriteByte('\n')
		b = b[n:]
	}
	return sb.String()
}

func readHexDump(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return hex.DecodeString(strings.Join(strings.Fields(string(raw)), ""))
}

func TestGoldenRecordBothWays(t *testing.T) {
	r := goldenRecord()
	enc := AppendRecord(nil, &r)
	checkGolden(t, "record-v1", enc)
	want, _ := readHexDump(filepath.Join(goldenDir, "record-v1.hex"))
	got, n, err := DecodeRecord(want)
	if err != nil || n != len(want) {
		t.Fatalf("decode golden: n=%d err=%v", n, err)
	}
	assertRecordEqual(t, got, r)
}

func TestGoldenSegmentBothWays(t *testing.T) {
	checkGolden(t, "segment-v1", goldenSegment())
	want, _ := readHexDump(filepath.Join(goldenDir, "segment-v1.hex"))
	sum, err := Scan(bytes.NewReader(want), int64(len(want)), ScanOptions{Name: "golden"})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Header.Base != 42 || sum.Records != 2 || sum.Next != 44 || sum.End != int64(len(want)) || sum.Torn {
		t.Fatalf("summary of golden segment: %+v", sum)
	}
}

func TestGoldenIndexBothWays(t *testing.T) {
	checkGolden(t, "index-v1", goldenIndex())
	want, _ := readHexDump(filepath.Join(goldenDir, "index-v1.hex"))
	ix, err := DecodeIndex(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(AppendIndex(nil, ix), want) {
		t.Fatal("decoded golden index does not re-encode to the same bytes")
	}
}

func assertRecordEqual(t *testing.T, got, want Record) {
	t.Helper()
	if got.Offset != want.Offset || got.Generation != want.Generation || got.Flags != want.Flags ||
		got.Timestamp != want.Timestamp || !bytes.Equal(got.Key, want.Key) || !bytes.Equal(got.Value, want.Value) {
		t.Fatalf("record mismatch:\n got %+v\nwant %+v", got, want)
	}
}
