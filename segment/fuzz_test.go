package segment

import (
	"bytes"
	"errors"
	"testing"
)

// The decoders read bytes from a disk that may be damaged in any way: none
// may panic, and every verdict must be one of the documented ones.

func FuzzDecodeRecord(f *testing.F) {
	r := goldenRecord()
	f.Add(AppendRecord(nil, &r))
	f.Add(make([]byte, 40))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, n, err := DecodeRecord(b)
		if err == nil {
			if n > len(b) || n != rec.Size() {
				t.Fatalf("decoded size %d of %d bytes, record says %d", n, len(b), rec.Size())
			}
			again := AppendRecord(nil, &rec)
			if !bytes.Equal(again, b[:n]) {
				t.Fatal("a decoded record does not re-encode to its bytes")
			}
			return
		}
		for _, want := range []error{ErrShort, ErrZero, ErrHeaderChecksum, ErrBodyChecksum, ErrBadLength} {
			if errors.Is(err, want) {
				return
			}
		}
		t.Fatalf("undocumented verdict %v", err)
	})
}

func FuzzScanSegment(f *testing.F) {
	f.Add(goldenSegment(), false)
	img, _ := buildSegment(3, 4, 100)
	f.Add(img, true)
	f.Fuzz(func(t *testing.T, b []byte, sealed bool) {
		sum, err := scanBytes(b, sealed)
		if err != nil {
			return
		}
		if sum.End > int64(len(b)) || sum.Next-sum.Header.Base != sum.Records {
			t.Fatalf("inconsistent summary %+v for %d bytes", sum, len(b))
		}
	})
}

func FuzzDecodeIndex(f *testing.F) {
	f.Add(goldenIndex())
	f.Fuzz(func(t *testing.T, b []byte) {
		ix, err := DecodeIndex(b)
		if err != nil {
			return
		}
		if !bytes.Equal(AppendIndex(nil, ix), b) {
			t.Fatal("a decoded index does not re-encode to its bytes")
		}
	})
}

// The head of any bytes never panics, and where the whole index decodes
// the head agrees with it.
func FuzzReadIndexHead(f *testing.F) {
	f.Add(goldenIndex())
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ReadIndexHead(bytes.NewReader(b), int64(len(b)))
		ix, ixErr := DecodeIndex(b)
		if ixErr != nil || err != nil {
			return
		}
		if h.Base != ix.Base || h.DataEnd != ix.DataEnd || h.Next != ix.Next || h.Entries != len(ix.Entries) {
			t.Fatalf("head %+v of index %+v", h, ix)
		}
	})
}

func FuzzDecodeHeader(f *testing.F) {
	f.Add(AppendHeader(nil, Header{Base: 9, Created: 3}))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := DecodeHeader(b)
		if err == nil && !bytes.Equal(AppendHeader(nil, h), b[:HeaderSize]) {
			t.Fatal("a decoded header does not re-encode to its bytes")
		}
	})
}
