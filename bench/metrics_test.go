package bench

import (
	"math"
	"testing"
)

type metrics map[string]float64

func (m metrics) ReportMetric(n float64, unit string) { m[unit] = n }

func TestReportMetricsGivesEveryFigureItsRatio(t *testing.T) {
	work := sampleResults()[1]
	work.Baselines[0].Name = "raw disk"
	got := metrics{}
	ReportMetrics(got, work)
	want := map[string]float64{
		"records/s": 500, "MB/s": 0.05,
		"records/s-x-raw_disk": 0.5, "MB/s-x-raw_disk": 0.5,
		"p999-ns": float64(work.Latency.P999), "max-ns-x-raw_disk": work.Baselines[0].Ratios[FigMax],
	}
	for unit, v := range want {
		if g, ok := got[unit]; !ok || math.Abs(g-v) > 1e-9*v {
			t.Errorf("%s = %v (present %v), want %v", unit, g, ok, v)
		}
	}
	if len(got) != 2*len(Figures) {
		t.Errorf("%d metrics, want %d: %v", len(got), 2*len(Figures), got)
	}
}
