package bench

import (
	"strings"
)

// MetricReporter is what ReportMetrics writes to; *testing.B is one.
type MetricReporter interface {
	ReportMetric(n float64, unit string)
}

// ReportMetrics adds r's figures to a `go test -bench` line: records/s,
// MB/s, the latency percentiles in ns, and for each baseline the ratio of
// each figure to it ("records/s-x-raw"), so a benchmark never prints a
// figure without its baseline. Call it after the timed loop.
func ReportMetrics(b MetricReporter, r Result) {
	for _, f := range Figures {
		if v := r.Figure(f); v != 0 {
			b.ReportMetric(v, metricUnit(f))
		}
	}
	for _, base := range r.Baselines {
		for _, f := range Figures {
			if ratio, ok := base.Ratios[f]; ok {
				b.ReportMetric(ratio, metricUnit(f)+"-x-"+metricName(base.Name))
			}
		}
	}
}

func metricUnit(f Figure) string {
	switch f {
	case FigRecordsPerSec:
		return "records/s"
	case FigMBPerSec:
		return "MB/s"
	}
	return string(f) + "-ns"
}

// metricName makes a baseline name fit a benchmark unit: no spaces.
func metricName(s string) string {
	return strings.Join(strings.Fields(s), "_")
}
