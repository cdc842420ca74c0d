package workload

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/felixbroker/felix/bench"
	"github.com/felixbroker/felix/bench/internal/units"
)

// WriteSummary writes the workload results (baselines and raw-limit rows
// skipped) as one Markdown table, a row per result: its shape, records/s,
// MB/s, p50, p99 and p99.9, and the share of each baseline's records/s it
// reached. This is the table docs/benchmarks.md shows for a matrix.
func WriteSummary(w io.Writer, results []bench.Result) error {
	names := baselineNames(results)
	var b strings.Builder
	header := []string{"workload", "size", "batch", "fsync", "pubs", "records/s", "MB/s", "p50", "p99", "p99.9"}
	for _, n := range names {
		header = append(header, "x "+n)
	}
	writeRow(&b, header)
	writeRow(&b, separator(len(header)))
	for i := range results {
		r := &results[i]
		if r.Role != bench.RoleWorkload {
			continue
		}
		writeRow(&b, summaryRow(r, names))
	}
	b.WriteString("\nx <baseline>: records/s as a share of the raw limit measured in the same run.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func summaryRow(r *bench.Result, names []string) []string {
	p := r.Params
	row := []string{r.Workload, units.Bytes(uint64(p.RecordBytes)), strconv.Itoa(p.Batch), p.Fsync,
		strconv.Itoa(max(p.Publishers, p.Writers)), units.Count(r.RecordsPerSec), units.MBPerSec(r.MBPerSec)}
	for _, f := range []bench.Figure{bench.FigP50, bench.FigP99, bench.FigP999} {
		row = append(row, latencyCell(r.Figure(f)))
	}
	for _, n := range names {
		cell := "-"
		for _, base := range r.Baselines {
			if ratio, ok := base.Ratios[bench.FigRecordsPerSec]; ok && base.Name == n {
				cell = units.Ratio(ratio)
			}
		}
		row = append(row, cell)
	}
	return row
}

func latencyCell(ns float64) string {
	if ns == 0 {
		return "-"
	}
	return units.Duration(time.Duration(ns))
}

// baselineNames lists the baseline names of the workload results, in
// order of first appearance.
func baselineNames(results []bench.Result) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range results {
		for _, b := range r.Baselines {
			if r.Role == bench.RoleWorkload && !seen[b.Name] {
				seen[b.Name] = true
				out = append(out, b.Name)
			}
		}
	}
	return out
}

func separator(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "---"
	}
	return out
}

func writeRow(b *strings.Builder, cells []string) {
	fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
}
