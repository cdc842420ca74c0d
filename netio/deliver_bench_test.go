package netio

import (
	"testing"

	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment"
)

// BenchmarkAppendEvents100x1KiB is the deliverer's encode: 100 framed
// 1 KiB records, as the engine hands them, into EVENT_BATCH frames.
func BenchmarkAppendEvents100x1KiB(b *testing.B) {
	value := make([]byte, 1024)
	var recs []byte
	for i := range 100 {
		recs = segment.AppendRecordParts(recs, int64(i), 1, 0, int64(i), nil, value)
	}
	lim := wire.Limits{}.Effective()
	dst := make([]byte, 0, 256<<10)
	b.SetBytes(int64(len(recs)))
	b.ReportAllocs()
	for b.Loop() {
		out, err := appendEvents(dst[:0], 9, 0, recs, lim)
		if err != nil || len(out) == 0 {
			b.Fatal(err)
		}
	}
}
