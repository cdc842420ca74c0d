package replica

import (
	"errors"
	"fmt"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment"
)

// ErrMalformed matches a replication message the follower refuses to act
// on: its generation does not fit a log, or its records are not the
// consecutive, checksummed run of generations its header promises. The
// caller answers it with an ERROR (wire.CodeMalformedFrame); nothing of
// it reached the log.
var ErrMalformed = errors.New("felix/replica: malformed replication message")

// run is a stretch of a batch's entries written under one generation:
// AppendAt takes one generation per call.
type run struct {
	start, end int // entries[start:end]
	gen        uint32
}

// appendEntries walks records (whole framed records, as Log.Read returns
// them) and appends one entry per record to dst and one run per change of
// generation to runs. The records must have the offsets first, first+1,
// ... and generations that never fall. The entries' keys and values alias
// records: they are valid as long as records is, which is long enough for
// AppendAt, which copies them. Reusing dst and runs, it allocates nothing
// per record.
func appendEntries(dst []shardlog.Entry, runs []run, records []byte, first int64) ([]shardlog.Entry, []run, error) {
	it := segment.NewIter(records)
	want := first
	for rec, ok := it.Next(); ok; rec, ok = it.Next() {
		if rec.Offset != want {
			return dst, runs, fmt.Errorf("%w: record %d of the batch has offset %d, want %d", ErrMalformed, want-first, rec.Offset, want)
		}
		n := len(runs)
		switch {
		case n == 0 || rec.Generation > runs[n-1].gen:
			runs = append(runs, run{start: len(dst), end: len(dst), gen: rec.Generation})
			n++
		case rec.Generation < runs[n-1].gen:
			return dst, runs, fmt.Errorf("%w: record at offset %d has generation %d after generation %d", ErrMalformed, rec.Offset, rec.Generation, runs[n-1].gen)
		}
		dst = append(dst, shardlog.Entry{Key: rec.Key, Value: rec.Value, Timestamp: rec.Timestamp, Flags: rec.Flags})
		runs[n-1].end = len(dst)
		want++
	}
	if err := it.Err(); err != nil {
		return dst, runs, fmt.Errorf("%w: record at offset %d (byte %d of the batch): %w", ErrMalformed, want, it.Pos(), err)
	}
	return dst, runs, nil
}

// firstRecord is the first record of b, which holds whole framed records.
func firstRecord(b []byte) (segment.Record, bool) {
	it := segment.NewIter(b)
	return it.Next()
}
