package bench

import (
	"bytes"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"time"

	"github.com/felixbroker/felix/bench/internal/chart"
	"github.com/felixbroker/felix/bench/internal/units"
)

// ReportFile is the name of the report WriteReport writes.
const ReportFile = "report.html"

// WriteReport writes dir/report.html (creating dir): one self-contained page
// with the results' table, a records/s and an MB/s bar chart (each result
// beside its baselines), a latency percentile chart per result with its
// baselines' curves, and the numbers behind each chart. Styles and charts
// are inline; the page fetches nothing, so it renders offline. It refuses
// results that fail Validate and replaces an older report atomically.
func WriteReport(dir string, results []Result) error {
	if err := ValidateAll(results); err != nil {
		return err
	}
	var page bytes.Buffer
	if err := reportTemplate.Execute(&page, newReportPage(results)); err != nil {
		return fmt.Errorf("felix/bench: render report: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, ReportFile), page.Bytes())
}

func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".report-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// reportPage is what the template renders.
type reportPage struct {
	Generated  string
	Machines   []string
	Header     []string
	Rows       []reportRow // the text table's rows
	Throughput []template.HTML
	Latency    []reportLatency
}

type reportRow struct {
	Cells    []string
	Baseline bool
}

type reportLatency struct {
	Workload string
	Chart    template.HTML
	Curves   []reportCurve
}

// reportCurve is the data behind one curve, written out as a table.
type reportCurve struct {
	Name   string
	Points [][3]string // percentile, 1/(1-q), value
}

func newReportPage(results []Result) reportPage {
	p := reportPage{Machines: distinctMachines(results), Header: tableHeader}
	if len(results) > 0 {
		p.Generated = results[0].Started.Format(time.RFC3339)
	}
	for i := range results {
		r := &results[i]
		p.Rows = append(p.Rows, reportRow{Cells: resultRow(r)})
		for j := range r.Baselines {
			p.Rows = append(p.Rows, reportRow{Cells: baselineRow(&r.Baselines[j]), Baseline: true})
		}
		if r.Latency != nil {
			p.Latency = append(p.Latency, latencySection(r))
		}
	}
	for _, f := range []Figure{FigRecordsPerSec, FigMBPerSec} {
		if groups := barGroups(results, f); len(groups) > 0 {
			p.Throughput = append(p.Throughput, template.HTML(chart.Bars(figureTitle(f), groups)))
		}
	}
	return p
}

func figureTitle(f Figure) string {
	if f == FigMBPerSec {
		return "MB/s (10^6 bytes), each result beside its baselines"
	}
	return "records/s, each result beside its baselines"
}

// barGroups makes one group per result with a non-zero figure f: the
// result's bar, then one per baseline with the ratio in its text.
func barGroups(results []Result, f Figure) []chart.BarGroup {
	var groups []chart.BarGroup
	for i := range results {
		r := &results[i]
		if r.Figure(f) == 0 {
			continue
		}
		g := chart.BarGroup{Label: r.Workload + "  " + r.Params.String()}
		g.Bars = append(g.Bars, chart.Bar{Label: r.Workload, Value: r.Figure(f), Text: formatFigure(f, r.Figure(f))})
		for j := range r.Baselines {
			b := &r.Baselines[j]
			text := formatFigure(f, b.Figure(f))
			if ratio, ok := b.Ratios[f]; ok {
				text += " (result " + units.Ratio(ratio) + ")"
			}
			g.Bars = append(g.Bars, chart.Bar{Label: "baseline " + b.Name, Value: b.Figure(f), Text: text})
		}
		groups = append(groups, g)
	}
	return groups
}

func latencySection(r *Result) reportLatency {
	series := []chart.Series{latencySeries(r.Workload, r.Latency)}
	curves := []reportCurve{curveTable(r.Workload, r.Latency)}
	for j := range r.Baselines {
		b := &r.Baselines[j]
		if b.Latency != nil {
			series = append(series, latencySeries("baseline "+b.Name, b.Latency))
			curves = append(curves, curveTable("baseline "+b.Name, b.Latency))
		}
	}
	chartSVG := chart.Latency("latency of "+r.Workload, r.Params.String(), series)
	return reportLatency{Workload: r.Workload, Chart: template.HTML(chartSVG), Curves: curves}
}

func latencySeries(name string, l *Latency) chart.Series {
	s := chart.Series{Name: name, Count: l.Count, Label: units.Duration}
	for _, p := range l.Curve {
		s.Points = append(s.Points, chart.Point{Quantile: p.Quantile, Value: p.Value})
	}
	s.Marks = []chart.Mark{
		{Label: "p50", Point: chart.Point{Quantile: 0.5, Value: l.P50}},
		{Label: "p90", Point: chart.Point{Quantile: 0.9, Value: l.P90}},
		{Label: "p99", Point: chart.Point{Quantile: 0.99, Value: l.P99}},
		{Label: "p99.9", Point: chart.Point{Quantile: 0.999, Value: l.P999}},
		{Label: "max", Point: chart.Point{Quantile: 1, Value: l.Max}},
	}
	return s
}

func curveTable(name string, l *Latency) reportCurve {
	c := reportCurve{Name: name}
	for _, p := range l.Curve {
		inverse := "inf"
		if p.Quantile < 1 {
			inverse = fmt.Sprintf("%.1f", 1/(1-p.Quantile))
		}
		c.Points = append(c.Points, [3]string{fmt.Sprintf("%.4f%%", 100*p.Quantile), inverse, units.Duration(p.Value)})
	}
	return c
}
