package bench

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestTableIsAlignedAndShowsRatios(t *testing.T) {
	var out bytes.Buffer
	if err := WriteTable(&out, sampleResults()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines, want machine, header, 2 results, 1 baseline, legend:\n%s", len(lines), out.String())
	}
	if !strings.HasPrefix(lines[0], "machine: Test CPU, 2 cores; linux/amd64; go1.26; data /data on ext4") {
		t.Errorf("machine line %q", lines[0])
	}
	header, work, vs := lines[1], lines[3], lines[4]
	for _, want := range []string{"ring.fdatasync", "size=100 io=io_uring file=prezeroed", "500", "1.00s"} {
		if !strings.Contains(work, want) {
			t.Errorf("result row lacks %q: %q", want, work)
		}
	}
	for _, want := range []string{"  vs raw", "1.00k (0.500x)", "0.100 (0.500x)", "(2.00x)"} {
		if !strings.Contains(vs, want) {
			t.Errorf("baseline row lacks %q: %q", want, vs)
		}
	}
	// Figures are right-aligned: every row ends where the header does.
	for _, l := range lines[2:5] {
		if len([]rune(l)) != len([]rune(header)) {
			t.Errorf("row width %d, header %d:\n%s\n%s", len([]rune(l)), len([]rune(header)), header, l)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	in := sampleResults()
	var buf bytes.Buffer
	if err := WriteJSON(&buf, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"format": "felix-bench/1"`) || !strings.Contains(buf.String(), `"p99_ns": `) {
		t.Fatalf("JSON lacks the format or a figure:\n%.400s", buf.String())
	}
	out, err := ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 {
		t.Fatalf("%d results back, want 2", len(out))
	}
	got, want := out[1], in[1]
	if got.Workload != want.Workload || !got.Started.Equal(want.Started) || got.Duration != want.Duration ||
		got.Records != want.Records || got.Params.String() != want.Params.String() || *got.Machine != *want.Machine {
		t.Errorf("result changed through JSON:\n got %+v\nwant %+v", got, want)
	}
	if got.Baselines[0].Ratios[FigP99] != want.Baselines[0].Ratios[FigP99] || got.Latency.P999 != want.Latency.P999 {
		t.Errorf("figures changed through JSON")
	}
	if h, err := got.Latency.Histogram(); err != nil || h.TotalCount() != 1000 {
		t.Errorf("encoded histogram back: %v, err %v", h, err)
	}
	if _, err := ReadJSON(strings.NewReader(`{"format":"other/9","results":[]}`)); err == nil {
		t.Error("a foreign format was read")
	}
}

func TestCSVRowsAndColumns(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCSV(&buf, sampleResults()); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want header + baseline result + one result/baseline pair", len(rows))
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	raw, work := rows[1], rows[2]
	check := func(row []string, name, want string) {
		t.Helper()
		if got := row[col[name]]; got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	check(raw, "workload", "raw.fdatasync")
	check(raw, "role", "baseline")
	check(raw, "baseline", "")
	check(raw, "ratio_p99", "")
	check(work, "records_per_s", "500")
	check(work, "baseline", "raw")
	check(work, "baseline_records_per_s", "1000")
	check(work, "ratio_records_per_s", "0.5")
	check(work, "started", "2025-01-02T03:04:05Z")
	p99, _ := strconv.ParseFloat(work[col["p99_ns"]], 64)
	if !near(time.Duration(p99), 1978*time.Microsecond) {
		t.Errorf("p99_ns %v, want about 1.978ms", p99)
	}
	for _, row := range rows {
		if len(row) != len(csvHeader) {
			t.Errorf("row of %d cells, header has %d", len(row), len(csvHeader))
		}
	}
}

func TestFreeSpaceDoesNotMakeAnotherMachine(t *testing.T) {
	results := sampleResults()
	later := *results[1].Machine
	later.DiskBytes, later.DiskFreeBytes = 1<<40, 1<<30
	results[1].Machine = &later
	earlier := *results[0].Machine
	earlier.DiskBytes, earlier.DiskFreeBytes = 1<<40, 2<<30
	results[0].Machine = &earlier
	if got := distinctMachines(results); len(got) != 1 {
		t.Errorf("%d machines %q, want 1", len(got), got)
	}
	other := later
	other.Filesystem = "xfs"
	results[1].Machine = &other
	if got := distinctMachines(results); len(got) != 2 {
		t.Errorf("%d machines, want 2 for two file systems", len(got))
	}
}
