package replica

import (
	"errors"
	"testing"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment"
)

func TestRecordsDecodeIntoRunsOfOneGeneration(t *testing.T) {
	entries, runs, err := appendEntries(nil, nil, records(10, 1, 1, 3, 4, 4, 4), 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []run{{0, 2, 1}, {2, 3, 3}, {3, 6, 4}}
	if len(runs) != len(want) || len(entries) != 6 {
		t.Fatalf("runs %v of %d entries, want %v of 6", runs, len(entries), want)
	}
	for i := range want {
		if runs[i] != want[i] {
			t.Fatalf("runs %v, want %v", runs, want)
		}
	}
	for i, e := range entries {
		off := int64(10 + i)
		if string(e.Value) != string(folValue(off, genAt(runs, i))) || e.Timestamp != off+1 {
			t.Fatalf("entry %d is %+v", i, e)
		}
	}
	if entries, runs, err := appendEntries(entries[:0], runs[:0], nil, 3); err != nil || len(entries) != 0 || len(runs) != 0 {
		t.Fatalf("no records: %v %v %v", entries, runs, err)
	}
}

func TestRecordsDecodeRefusesWhatIsNotAConsecutiveRun(t *testing.T) {
	for name, c := range map[string]struct {
		b     []byte
		first int64
	}{
		"first offset":     {records(4, 1), 3},
		"a skipped offset": {append(records(0, 1), records(2, 1)...), 0},
		"a repeat":         {append(records(0, 1), records(0, 1)...), 0},
		"a falling gen":    {append(records(0, 2), records(1, 1)...), 0},
		"torn":             {records(0, 1, 1)[:60], 0},
		"damaged":          {flip(records(0, 1), 42), 0},
	} {
		if _, _, err := appendEntries(nil, nil, c.b, c.first); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}

func TestRecordsDecodeAllocatesNothingPerRecord(t *testing.T) {
	b := records(0, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3)
	var entries []shardlog.Entry
	var runs []run
	allocs := testing.AllocsPerRun(100, func() {
		var err error
		if entries, runs, err = appendEntries(entries[:0], runs[:0], b, 0); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per decode of 10 records, want 0", allocs)
	}
}

func FuzzRecordsDecode(f *testing.F) {
	f.Add(records(0, 1, 1, 2), int64(0))
	f.Add(records(5, 3), int64(5))
	f.Add([]byte{1, 2, 3}, int64(0))
	f.Fuzz(func(t *testing.T, b []byte, first int64) {
		entries, runs, err := appendEntries(nil, nil, b, first)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("an error that is not ErrMalformed: %v", err)
			}
			return
		}
		// What decodes is a consecutive run from first, in rising runs.
		it := segment.NewIter(b)
		for i := 0; ; i++ {
			rec, ok := it.Next()
			if !ok {
				if i != len(entries) {
					t.Fatalf("%d entries from %d records", len(entries), i)
				}
				break
			}
			if rec.Offset != first+int64(i) || rec.Generation != genAt(runs, i) {
				t.Fatalf("record %d: offset %d gen %d", i, rec.Offset, rec.Generation)
			}
		}
		for i := 1; i < len(runs); i++ {
			if runs[i].gen <= runs[i-1].gen || runs[i].start != runs[i-1].end {
				t.Fatalf("runs %v", runs)
			}
		}
	})
}
