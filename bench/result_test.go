package bench

import (
	"errors"
	"math"
	"testing"
	"time"
)

// sampleResults returns a raw baseline (1..1000us, 1000 records of 100
// bytes in 1s) and a workload twice as slow at half the rate, set against it.
func sampleResults() []Result {
	start := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	raw, slow := NewRecorder(2), NewRecorder(1)
	recordUniform(raw)
	for us := 1; us <= 1000; us += 2 {
		slow.Lane(0).RecordN(time.Duration(2*us)*time.Microsecond, 2)
		slow.Lane(0).Count(1, 100)
	}
	m := &Machine{CPU: "Test CPU", Cores: 2, OS: "linux", Arch: "amd64", GoVersion: "go1.26", DataDir: "/data", Filesystem: "ext4"}
	base := NewResult("raw.fdatasync", RoleBaseline, Params{RecordBytes: 100, IOPath: "raw"},
		Measurement{Started: start, Elapsed: time.Second, Records: 1000, Bytes: 100_000, Latency: raw.Latency()})
	base.Machine = m
	work := NewResult("ring.fdatasync", RoleWorkload, Params{RecordBytes: 100, IOPath: "io_uring", Extra: map[string]string{"file": "prezeroed"}},
		Measurement{Started: start, Elapsed: time.Second, Records: 500, Bytes: 50_000, Latency: slow.Latency()})
	work.Machine = m
	work.AddBaseline("raw", base)
	return []Result{base, work}
}

func TestRatiosOfEveryFigure(t *testing.T) {
	work := sampleResults()[1]
	b := work.Baselines[0]
	// The slow sample is 2, 6, 10 ... 1998us, each twice.
	want := map[Figure]float64{FigRecordsPerSec: 0.5, FigMBPerSec: 0.5,
		FigP50: 998.0 / 500, FigP90: 1798.0 / 900, FigP99: 1978.0 / 990, FigP999: 1998.0 / 999, FigMax: 1998.0 / 1000}
	for f, w := range want {
		got, ok := b.Ratios[f]
		if !ok || math.Abs(got-w) > w*0.002 {
			t.Errorf("ratio %s = %v (present %v), want %v", f, got, ok, w)
		}
	}
	if work.RecordsPerSec != 500 || work.MBPerSec != 0.05 {
		t.Errorf("rates %v records/s %v MB/s, want 500 and 0.05", work.RecordsPerSec, work.MBPerSec)
	}
}

func TestRatioNeedsBothFigures(t *testing.T) {
	var r Result
	r.RecordsPerSec = 10
	r.AddBaseline("no latency, no rate", Result{})
	if len(r.Baselines[0].Ratios) != 0 {
		t.Errorf("ratios %v against a baseline with no figures, want none", r.Baselines[0].Ratios)
	}
	for _, c := range [][2]float64{{0, 1}, {1, 0}, {math.Inf(1), 1}, {math.NaN(), 1}} {
		if _, ok := Ratio(c[0], c[1]); ok {
			t.Errorf("Ratio(%v, %v) defined", c[0], c[1])
		}
	}
}

func TestAWorkloadWithoutABaselineIsRefused(t *testing.T) {
	results := sampleResults()
	results[1].Baselines = nil
	writers := map[string]func([]Result) error{
		"table":  func(rs []Result) error { return WriteTable(discard{}, rs) },
		"json":   func(rs []Result) error { return WriteJSON(discard{}, rs) },
		"csv":    func(rs []Result) error { return WriteCSV(discard{}, rs) },
		"report": func(rs []Result) error { return WriteReport(t.TempDir(), rs) },
	}
	for name, write := range writers {
		if err := write(results); !errors.Is(err, ErrNoBaseline) {
			t.Errorf("%s: err %v, want ErrNoBaseline", name, err)
		}
	}
}

func TestValidate(t *testing.T) {
	cases := map[string]func(*Result){
		"no name":            func(r *Result) { r.Workload = "" },
		"unknown role":       func(r *Result) { r.Role = "other" },
		"negative records":   func(r *Result) { r.Records = -1 },
		"unnamed baseline":   func(r *Result) { r.Baselines[0].Name = "" },
		"negative duration ": func(r *Result) { r.Duration = -time.Second },
	}
	for name, spoil := range cases {
		r := sampleResults()[1]
		spoil(&r)
		if err := r.Validate(); !errors.Is(err, ErrInvalidResult) {
			t.Errorf("%s: err %v, want ErrInvalidResult", name, err)
		}
	}
	if err := ValidateAll(sampleResults()); err != nil {
		t.Errorf("sample results: %v", err)
	}
}

func TestParamsString(t *testing.T) {
	p := Params{RecordBytes: 1024, Batch: 8, Writers: 64, Fsync: "oncommit", IOPath: "io_uring", Rate: 5000,
		Extra: map[string]string{"shards": "4", "file": "prezeroed"}}
	want := "size=1024 batch=8 writers=64 fsync=oncommit io=io_uring rate=5000 file=prezeroed shards=4"
	if got := p.String(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
