package main

import (
	"encoding/csv"
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
		{"bench", "cache", "--gets", "101", "--count", "1"},
		{"bench", "cache", "--keys", "-1", "--count", "1"},
		{"bench", "cache", "--tls", "--count", "1"},
		{"bench", "group", "--consumers", "1,0", "--count", "1"},
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

// With no address, felix bench cache and group start a broker under --dir,
// drive it through the client, report each figure beside its baselines,
// and leave nothing behind.
func TestBenchCacheAndGroupRunAgainstAnEmbeddedBroker(t *testing.T) {
	dir, reportDir := t.TempDir(), filepath.Join(t.TempDir(), "report")
	out, err := runCLI(t, "bench", "cache", "--count", "400", "--clients", "4", "--keys", "100", "--gets", "75",
		"--size", "128", "--fsync", "on_commit", "--baseline-duration", "100ms", "--io", "portable", "--dir", dir,
		"--json", "--report", reportDir)
	if err != nil {
		t.Fatal(err)
	}
	results := readResults(t, out)
	wantResult(t, results, "cache/get", 300, "tcp")
	wantResult(t, results, "cache/put", 100, "tcp", "groupcommit")
	page, err := os.ReadFile(filepath.Join(reportDir, bench.ReportFile))
	if err != nil || !strings.Contains(string(page), "latency of cache/get") {
		t.Fatalf("report: %v", err)
	}
	out, err = runCLI(t, "bench", "group", "--count", "1000", "--batch", "32", "--consumers", "1,2", "--size", "64",
		"--fsync", "none", "--io", "portable", "--dir", dir, "--json")
	if err != nil {
		t.Fatal(err)
	}
	results = readResults(t, out)
	if len(results) != 2 || results[1].Params.Subscribers != 2 {
		t.Fatalf("results %+v", results)
	}
	for _, r := range results {
		wantResult(t, []bench.Result{r}, "group", 1000, "subscription")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("left behind in --dir: %v", entries)
	}
}

// With --addr they drive the broker given (here through its TLS listener
// for the group), and delete what they created there.
func TestBenchCacheAndGroupDriveTheBrokerAtAddr(t *testing.T) {
	dataDir, certDir := t.TempDir(), t.TempDir()
	certFile, keyFile, _ := writeCert(t, certDir)
	b := benchTestBroker(t, map[string]string{"data": dataDir, "tls-addr": "127.0.0.1:0", "tls-cert": certFile, "tls-key": keyFile})
	out, err := runCLI(t, "bench", "cache", "--addr", b.Addr().String(), "--count", "200", "--clients", "2",
		"--keys", "50", "--gets", "50", "--size", "64", "--baseline-duration", "100ms", "--csv")
	if err != nil {
		t.Fatal(err)
	}
	rows := readCSV(t, out)
	if got := csvColumn(rows, "workload"); strings.Join(got, " ") != "cache/get cache/put" {
		t.Fatalf("rows of %v, want one per result and baseline (no disk baseline: the broker's disk is not ours)", got)
	}
	for _, records := range csvColumn(rows, "records") {
		if records != "100" {
			t.Fatalf("records %v, want 100 of each kind", csvColumn(rows, "records"))
		}
	}
	out, err = runCLI(t, "bench", "group", "--addr", b.TLSAddr().String(), "--tls", "--tls-ca", certFile,
		"--count", "500", "--consumers", "2", "--sync-ack", "--size", "64", "--json")
	if err != nil {
		t.Fatal(err)
	}
	results := readResults(t, out)
	wantResult(t, results, "group", 500, "subscription")
	if results[0].Params.Extra["ack"] != "sync" {
		t.Fatalf("params %v", results[0].Params)
	}
	for _, kind := range []string{"caches", "streams"} {
		if entries, _ := os.ReadDir(filepath.Join(dataDir, kind, "bench", "bench")); len(entries) != 0 {
			t.Fatalf("left behind on the broker: %s %v", kind, entries)
		}
	}
}

// The engine-only variants run only when asked for, and never with an
// address.
func TestBenchCacheAndGroupInProcess(t *testing.T) {
	dir := t.TempDir()
	out, err := runCLI(t, "bench", "cache", "--in-process", "--count", "200", "--clients", "2", "--keys", "20",
		"--gets", "100", "--size", "64", "--baseline-duration", "100ms", "--io", "portable", "--dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	contains(t, out, "cache/get", "io=portable", "vs log/read")
	out, err = runCLI(t, "bench", "group", "--in-process", "--count", "300", "--consumers", "1", "--size", "64",
		"--fsync", "none", "--io", "portable", "--dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	contains(t, out, "group", "acked=300", "vs subscription")
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("left behind in --dir: %v", entries)
	}
	for _, cmd := range []string{"cache", "group"} {
		if _, err := runCLI(t, "bench", cmd, "--in-process", "--addr", "127.0.0.1:1", "--count", "1"); err == nil {
			t.Errorf("%s --in-process --addr: accepted", cmd)
		}
	}
}

// benchTestBroker starts a broker from serve flags, logging errors only.
func benchTestBroker(t *testing.T, flags map[string]string) *served {
	t.Helper()
	flags["addr"], flags["admin-addr"], flags["log-level"] = "127.0.0.1:0", "", "error"
	b := startServed(t, configOf(t, flags))
	return b
}

func readResults(t *testing.T, out string) []bench.Result {
	t.Helper()
	results, err := bench.ReadJSON(strings.NewReader(out))
	if err != nil {
		t.Fatalf("%v in:\n%s", err, out)
	}
	return results
}

// wantResult finds the first result of workload and checks its records,
// latency samples and baselines (each with its ratios).
func wantResult(t *testing.T, results []bench.Result, workload string, records int64, baselines ...string) {
	t.Helper()
	for _, r := range results {
		if r.Workload != workload {
			continue
		}
		if r.Records != records || r.Latency == nil || r.Latency.Count != records || len(r.Baselines) != len(baselines) {
			t.Fatalf("%s: %d records, latency %+v, %d baselines; want %d, %d, %v", workload, r.Records, r.Latency,
				len(r.Baselines), records, records, baselines)
		}
		for i, b := range r.Baselines {
			if b.Name != baselines[i] || len(b.Ratios) == 0 {
				t.Fatalf("%s: baseline %d is %s with %d ratios, want %s", workload, i, b.Name, len(b.Ratios), baselines[i])
			}
		}
		return
	}
	t.Fatalf("no %s among %d results", workload, len(results))
}

func readCSV(t *testing.T, out string) [][]string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("csv %v:\n%s", err, out)
	}
	return rows
}

// csvColumn is the column named name of every row after the header.
func csvColumn(rows [][]string, name string) []string {
	var out []string
	for i, h := range rows[0] {
		if h == name {
			for _, row := range rows[1:] {
				out = append(out, row[i])
			}
		}
	}
	return out
}
