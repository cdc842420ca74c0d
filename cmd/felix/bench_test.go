package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/bench/workload"
)

// With no address, felix bench pub starts a broker on a temporary
// directory under --dir, publishes, writes JSON and a report, and leaves
// nothing behind.
func TestBenchPubRunsAgainstAnEmbeddedBroker(t *testing.T) {
	dir, reportDir := t.TempDir(), filepath.Join(t.TempDir(), "report")
	out, err := runCLI(t, "bench", "pub", "--count", "300", "--batch", "10", "--publishers", "3", "--size", "256",
		"--fsync", "on_commit", "--baseline-duration", "100ms", "--io", "portable", "--dir", dir, "--json", "--report", reportDir)
	if err != nil {
		t.Fatal(err)
	}
	results, err := bench.ReadJSON(strings.NewReader(out))
	if err != nil {
		t.Fatalf("%v in:\n%s", err, out)
	}
	if len(results) != 1 || results[0].Workload != "pub" || results[0].Records != 300 || len(results[0].Baselines) != 2 {
		t.Fatalf("results %+v", results)
	}
	page, err := os.ReadFile(filepath.Join(reportDir, bench.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", "latency of pub", "baseline tcp", "baseline groupcommit", "records/s, each result beside its baselines"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(string(page), "http://") || strings.Contains(string(page), "https://") {
		t.Error("the report refers to a URL: it would not render offline")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("left behind in --dir: %v", entries)
	}
}

// The table shows each figure beside its baselines with the ratio.
func TestBenchLogPrintsATableWithItsBaseline(t *testing.T) {
	out, err := runCLI(t, "bench", "log", "--count", "500", "--size", "128", "--fsync", "none",
		"--baseline-duration", "100ms", "--io", "portable", "--dir", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	contains(t, out, "WORKLOAD", "RECORDS/S", "P99.9", "log ", "vs pagecache", "x)")
}

func TestBenchFlagsAreCheckedBeforeAnythingRuns(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "pub", "--size", "huge"},
		{"bench", "pub", "--fsync", "sometimes"},
		{"bench", "pub", "--batch", "-1"},
		{"bench", "log", "--io", "telepathy"},
		{"bench", "matrix", "--sizes", "1,x"},
		{"bench", "log", "--json", "--csv", "--count", "1"},
	} {
		if _, err := runCLI(t, args...); err == nil {
			t.Errorf("%v: accepted", args)
		}
	}
}

func TestBenchMatrixListsParse(t *testing.T) {
	c := benchMatrixCmd{Sizes: "128,4KiB", Batches: "1,64", Fsyncs: "none,on_commit", Publishers: "1,16", Quick: true}
	m, err := c.matrix()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Shapes(benchBase())) != 16 || m.RecordBytes[1] != 4096 {
		t.Fatalf("matrix %+v", m)
	}
}

func benchBase() workload.Spec { return workload.Spec{Inflight: 1} }
