package observe

import (
	"strings"
	"testing"
)

// Every family is headed by one # HELP and one # TYPE line, histograms'
// _bucket, _sum and _count lines included, and collected families follow.
func TestWritePrometheusHeadsEachFamilyWithItsMetadata(t *testing.T) {
	r := NewRegistry()
	c := r.Counter(`felix_test_events_total{kind="a"}`, "Events of kind a or b.")
	r.Counter(`felix_test_events_total{kind="b"}`, "Events of kind a or b.").Add(2)
	c.Inc()
	r.GaugeFunc("felix_test_depth", "A depth.", func() float64 { return 7 })
	h := r.Histogram("felix_test_wait_seconds", "A wait.", []float64{0.1, 1})
	h.Update(0.5)
	r.Collect("felix_test_lag_records", TypeGauge, "Lag per thing.", func(emit func(Sample)) {
		emit(Sample{Labels: Label("thing", `x"y`), Value: 3})
	})
	var out strings.Builder
	if err := r.WritePrometheus(&out); err != nil {
		t.Fatal(err)
	}
	want := `# HELP felix_test_depth A depth.
# TYPE felix_test_depth gauge
felix_test_depth 7
# HELP felix_test_events_total Events of kind a or b.
# TYPE felix_test_events_total counter
felix_test_events_total{kind="a"} 1
felix_test_events_total{kind="b"} 2
# HELP felix_test_wait_seconds A wait.
# TYPE felix_test_wait_seconds histogram
felix_test_wait_seconds_bucket{le="0.1"} 0
felix_test_wait_seconds_bucket{le="1"} 1
felix_test_wait_seconds_bucket{le="+Inf"} 1
felix_test_wait_seconds_sum 0.5
felix_test_wait_seconds_count 1
# HELP felix_test_lag_records Lag per thing.
# TYPE felix_test_lag_records gauge
felix_test_lag_records{thing="x\"y"} 3
`
	if out.String() != want {
		t.Fatalf("exposition:\n%s\nwant:\n%s", out.String(), want)
	}
}

// Declaring a family badly is a bug the registry refuses loudly.
func TestBadDeclarationsPanic(t *testing.T) {
	for name, declare := range map[string]func(r *Registry){
		"counter without _total": func(r *Registry) { r.Counter("felix_test_events", "x") },
		"no help":                func(r *Registry) { r.GaugeFunc("felix_test_depth", "", one) },
		"bad name":               func(r *Registry) { r.GaugeFunc("felix-test", "x", one) },
		"two types": func(r *Registry) {
			r.GaugeFunc(`felix_test_x{a="1"}`, "x", one)
			r.CounterFunc(`felix_test_x{a="2"}`, "x", one)
		},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			declare(NewRegistry())
		})
	}
}
