package workload

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/engine/shardlog"
)

func TestSpecDefaultsAndLimits(t *testing.T) {
	s, err := Spec{Publishers: 16}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if s.RecordBytes != 1024 || s.Batch != 1 || s.Connections != 16 || s.Inflight != 1 || s.Subscribers != 1 ||
		s.Duration != DefaultDuration || s.BaselineDuration != 2*time.Second {
		t.Fatalf("defaults: %+v", s)
	}
	if s, _ := (Spec{Duration: 500 * time.Millisecond}).WithDefaults(); s.BaselineDuration != 500*time.Millisecond {
		t.Fatalf("a baseline longer than its workload: %v", s.BaselineDuration)
	}
	for name, bad := range map[string]Spec{
		"record too small":        {RecordBytes: 4},
		"record too large":        {RecordBytes: RecordBytesMax + 1},
		"batch past the frame":    {RecordBytes: 64 << 10, Batch: 64},
		"more connections":        {Publishers: 2, Connections: 3},
		"too many publishers":     {Publishers: WorkersMax + 1},
		"negative rate":           {Rate: -1},
		"negative duration":       {Duration: -time.Second},
		"too many in flight":      {Inflight: InflightMax + 1},
		"batch beyond its bounds": {Batch: BatchMax + 1},
	} {
		if _, err := bad.WithDefaults(); !errors.Is(err, ErrSpec) {
			t.Errorf("%s: %v, want ErrSpec", name, err)
		}
	}
}

// Count and Rate are in records; the load is in calls of a batch each.
func TestSpecLoadConvertsRecordsToCalls(t *testing.T) {
	s, _ := Spec{Batch: 64, Count: 6400, Rate: 128_000, Publishers: 4}.WithDefaults()
	l := s.load(4)
	if l.Workers != 4 || l.Ops != 100 || l.Rate != 2000 {
		t.Fatalf("load %+v, want 4 workers, 100 calls, 2000 calls/s", l)
	}
}

func TestParsing(t *testing.T) {
	sizes, err := ParseList("128, 1KiB,4k,1MiB,2kb", ParseSize)
	if err != nil || !slices.Equal(sizes, []int{128, 1024, 4096, 1 << 20, 2000}) {
		t.Fatalf("sizes %v %v", sizes, err)
	}
	if _, err := ParseSize("lots"); !errors.Is(err, ErrSpec) {
		t.Fatalf("bad size: %v", err)
	}
	counts, err := ParseList("1,16,64", ParseInt)
	if err != nil || !slices.Equal(counts, []int{1, 16, 64}) {
		t.Fatalf("counts %v %v", counts, err)
	}
	if _, err := ParseList("1,0", ParseInt); !errors.Is(err, ErrSpec) {
		t.Fatalf("a zero count: %v", err)
	}
	modes, err := ParseList("none,periodic:50ms,on_commit", ParseFsync)
	if err != nil || modes[0] != shardlog.None() || modes[1] != shardlog.Periodic(50*time.Millisecond) || modes[2] != shardlog.OnCommit() {
		t.Fatalf("modes %v %v", modes, err)
	}
	if _, err := ParseFsync("sometimes"); !errors.Is(err, ErrSpec) {
		t.Fatalf("bad mode: %v", err)
	}
	if got := FsyncName(shardlog.Periodic(time.Second)); got != "periodic" {
		t.Fatalf("name %q", got)
	}
}

func TestTheStandardMatrixHasEveryShapeOnce(t *testing.T) {
	shapes := StandardMatrix(false).Shapes(Spec{Inflight: 1})
	if len(shapes) != 54 {
		t.Fatalf("%d shapes, want 3 sizes x 2 batches x 3 modes x 3 publisher counts = 54", len(shapes))
	}
	seen := map[string]bool{}
	for _, s := range shapes {
		key := s.params().String()
		if seen[key] {
			t.Fatalf("shape %s twice", key)
		}
		seen[key] = true
		if s.Duration != 5*time.Second || s.Connections != 0 {
			t.Fatalf("shape %+v", s)
		}
	}
	if q := StandardMatrix(true); q.Duration != 500*time.Millisecond {
		t.Fatalf("quick duration %v", q.Duration)
	}
}

// A group-commit write of a batch counts as the batch's records; a
// bandwidth is restated in records of the workload's size.
func TestBaselinesAreCountedInTheWorkloadsRecords(t *testing.T) {
	gc := bench.Result{Workload: "groupcommit/prezeroed/raw", Records: 1000, RecordsPerSec: 500, MBPerSec: 33,
		Latency: &bench.Latency{Count: 1000, P50: time.Millisecond}}
	r := perRecord(gc, 64)
	if r.Records != 64_000 || r.RecordsPerSec != 32_000 || r.MBPerSec != 33 || r.Latency.P50 != time.Millisecond ||
		r.Params.Extra["records_per_write"] != "64" {
		t.Fatalf("per record: %+v", r)
	}
	pc := bench.Result{Workload: "pagecache/raw", Bytes: 2 << 30, MBPerSec: 2048, Latency: &bench.Latency{Count: 1}}
	r = inRecordsOf(pc, 1024)
	if r.Records != 2<<20 || r.RecordsPerSec != 2_000_000 || r.Latency != nil {
		t.Fatalf("in records: %+v", r)
	}
}
