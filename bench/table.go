package bench

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/felixbroker/felix/bench/internal/units"
)

// tableHeader names the table's columns; the first two are text (left
// aligned), the rest figures (right aligned).
var tableHeader = []string{"WORKLOAD", "PARAMS", "RECORDS", "TIME", "RECORDS/S", "MB/S", "P50", "P90", "P99", "P99.9", "MAX"}

const tableTextColumns = 2

// WriteTable writes results as an aligned text table for people: one row
// per result, and under it one row per baseline with the baseline's figures
// and, in parentheses, the result's figure divided by it. The machines the
// results ran on head the table. It refuses results that fail Validate.
func WriteTable(w io.Writer, results []Result) error {
	if err := ValidateAll(results); err != nil {
		return err
	}
	var b strings.Builder
	for _, m := range distinctMachines(results) {
		fmt.Fprintf(&b, "machine: %s\n", m)
	}
	rows := [][]string{tableHeader}
	for i := range results {
		rows = append(rows, resultRow(&results[i]))
		for j := range results[i].Baselines {
			rows = append(rows, baselineRow(&results[i].Baselines[j]))
		}
	}
	writeAligned(&b, rows)
	b.WriteString("(x) = figure / baseline: for records/s and MB/s the share of the raw limit reached, for latencies how many times the raw latency\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func resultRow(r *Result) []string {
	row := []string{r.Workload, r.Params.String(), units.Count(float64(r.Records)), units.Duration(r.Duration.Round(time.Millisecond))}
	for _, f := range Figures {
		row = append(row, formatFigure(f, r.Figure(f)))
	}
	return row
}

func baselineRow(b *Baseline) []string {
	row := []string{"  vs " + b.Name, b.Workload, "", ""}
	for _, f := range Figures {
		cell := formatFigure(f, b.Figure(f))
		if ratio, ok := b.Ratios[f]; ok {
			cell += " (" + units.Ratio(ratio) + ")"
		}
		row = append(row, cell)
	}
	return row
}

// formatFigure prints a rate or a latency in nanoseconds; "-" when absent.
func formatFigure(f Figure, v float64) string {
	switch {
	case v == 0 && f.IsLatency():
		return "-"
	case f.IsLatency():
		return units.Duration(time.Duration(v))
	case f == FigMBPerSec:
		return units.MBPerSec(v)
	}
	return units.Count(v)
}

func writeAligned(b *strings.Builder, rows [][]string) {
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	for _, row := range rows {
		var line strings.Builder
		for i, cell := range row {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			if i > 0 {
				line.WriteString("  ")
			}
			if i < tableTextColumns {
				line.WriteString(cell + pad)
			} else {
				line.WriteString(pad + cell)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

// distinctMachines returns the summaries of the machines of results, in
// order of first appearance; free disk space does not tell machines apart.
func distinctMachines(results []Result) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range results {
		if r.Machine == nil {
			continue
		}
		key := *r.Machine
		key.DiskFreeBytes = 0 // it moves while the run writes
		if s := key.String(); !seen[s] {
			seen[s] = true
			out = append(out, r.Machine.String())
		}
	}
	return out
}
