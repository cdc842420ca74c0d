package bench

import (
	"encoding/csv"
	"io"
	"strconv"
	"time"
)

// csvHeader is the first row of CSV output. Frozen: columns may be added at
// the end, never renamed, removed or moved.
var csvHeader = func() []string {
	h := []string{"workload", "role", "params", "started", "duration_s", "records", "bytes",
		"records_per_s", "mb_per_s", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns", "latency_count",
		"baseline", "baseline_workload"}
	for _, f := range Figures {
		h = append(h, "baseline_"+csvFigureName(f))
	}
	for _, f := range Figures {
		h = append(h, "ratio_"+string(f))
	}
	return append(h, "machine")
}()

// csvFigureName is the column name of a figure's value: latencies carry
// their unit.
func csvFigureName(f Figure) string {
	if f.IsLatency() {
		return string(f) + "_ns"
	}
	return string(f)
}

// WriteCSV writes results as CSV with csvHeader's columns: one row per
// result and baseline pair (a result's own figures repeat on each), or one
// row with empty baseline columns for a result without baselines. Absent
// figures and ratios are empty cells. It refuses results that fail Validate.
func WriteCSV(w io.Writer, results []Result) error {
	if err := ValidateAll(results); err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for i := range results {
		for _, row := range csvRows(&results[i]) {
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func csvRows(r *Result) [][]string {
	own := csvResultCells(r)
	if len(r.Baselines) == 0 {
		row := append(append([]string{}, own...), make([]string, 2+2*len(Figures))...)
		return [][]string{append(row, csvMachine(r))}
	}
	var rows [][]string
	for j := range r.Baselines {
		b := &r.Baselines[j]
		row := append(append([]string{}, own...), b.Name, b.Workload)
		for _, f := range Figures {
			row = append(row, csvNumber(b.Figure(f)))
		}
		for _, f := range Figures {
			ratio, ok := b.Ratios[f]
			row = append(row, csvOptional(ratio, ok))
		}
		rows = append(rows, append(row, csvMachine(r)))
	}
	return rows
}

func csvResultCells(r *Result) []string {
	cells := []string{r.Workload, string(r.Role), r.Params.String(), r.Started.UTC().Format(time.RFC3339Nano),
		strconv.FormatFloat(r.Duration.Seconds(), 'f', -1, 64),
		strconv.FormatInt(r.Records, 10), strconv.FormatInt(r.Bytes, 10)}
	for _, f := range Figures {
		cells = append(cells, csvNumber(r.Figure(f)))
	}
	count := ""
	if r.Latency != nil {
		count = strconv.FormatInt(r.Latency.Count, 10)
	}
	return append(cells, count)
}

// csvNumber prints v exactly; zero (an absent figure) is an empty cell.
func csvNumber(v float64) string {
	return csvOptional(v, v != 0)
}

func csvOptional(v float64, ok bool) string {
	if !ok {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func csvMachine(r *Result) string {
	if r.Machine == nil {
		return ""
	}
	return r.Machine.String()
}
