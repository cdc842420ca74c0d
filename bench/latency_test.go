package bench

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// near reports whether got is within the histogram's precision (three
// significant digits: 0.1%) of want.
func near(got, want time.Duration) bool {
	diff := got - want
	if diff < 0 {
		diff = -diff
	}
	return diff <= want/1000+1
}

// recordUniform records 1..1000us once each, spread over the recorder's
// lanes from one goroutine per lane.
func recordUniform(r *Recorder) {
	var wg sync.WaitGroup
	for lane := 0; lane < r.Lanes(); lane++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := r.Lane(lane)
			for us := 1 + lane; us <= 1000; us += r.Lanes() {
				l.Record(time.Duration(us) * time.Microsecond)
				l.Count(1, 100)
			}
		}()
	}
	wg.Wait()
}

func TestPercentilesOfUniformSample(t *testing.T) {
	r := NewRecorder(4)
	recordUniform(r)
	l := r.Latency()
	if l.Count != 1000 {
		t.Fatalf("count %d, want 1000", l.Count)
	}
	cases := []struct {
		name      string
		got, want time.Duration
	}{
		{"min", l.Min, 1 * time.Microsecond},
		{"p50", l.P50, 500 * time.Microsecond},
		{"p90", l.P90, 900 * time.Microsecond},
		{"p99", l.P99, 990 * time.Microsecond},
		{"p99.9", l.P999, 999 * time.Microsecond},
		{"max", l.Max, 1000 * time.Microsecond},
		{"mean", l.Mean, 500500 * time.Nanosecond},
	}
	for _, c := range cases {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v within 0.1%%", c.name, c.got, c.want)
		}
	}
	if records, bytes := r.Totals(); records != 1000 || bytes != 100_000 {
		t.Errorf("totals %d records %d bytes, want 1000 and 100000", records, bytes)
	}
}

func TestCurveEndsAtTheMaximum(t *testing.T) {
	r := NewRecorder(1)
	recordUniform(r)
	l := r.Latency()
	if len(l.Curve) < 10 {
		t.Fatalf("curve has %d points", len(l.Curve))
	}
	for i := 1; i < len(l.Curve); i++ {
		a, b := l.Curve[i-1], l.Curve[i]
		if b.Quantile < a.Quantile || b.Value < a.Value {
			t.Fatalf("curve not ascending at %d: %+v then %+v", i, a, b)
		}
	}
	for _, f := range []Point{{0.5, l.P50}, {0.9, l.P90}, {0.99, l.P99}, {0.999, l.P999}} {
		if !slices.Contains(l.Curve, f) {
			t.Errorf("curve does not pass through %+v", f)
		}
	}
	last := l.Curve[len(l.Curve)-1]
	if last.Quantile != 1 || last.Value != l.Max {
		t.Errorf("curve ends at %+v, want q=1 at max %v", last, l.Max)
	}
}

func TestOutOfRangeSamplesAreClampedNotDropped(t *testing.T) {
	r := NewRecorder(1)
	r.Lane(0).RecordN(2*time.Minute, 3)
	r.Lane(0).Record(-time.Second)
	r.Lane(0).RecordN(time.Millisecond, 0) // nothing
	l := r.Latency()
	if l.Count != 4 || l.Clamped != 3 {
		t.Fatalf("count %d clamped %d, want 4 and 3", l.Count, l.Clamped)
	}
	if !near(l.Max, LatencyHighest) || l.Min != 0 {
		t.Errorf("min %v max %v, want 0 and %v", l.Min, l.Max, LatencyHighest)
	}
}

func TestRecordingAllocatesNothing(t *testing.T) {
	lane := NewRecorder(1).Lane(0)
	d := time.Duration(0)
	allocs := testing.AllocsPerRun(1000, func() {
		d += 7919 * time.Nanosecond
		lane.RecordN(d, 3)
		lane.Count(3, 300)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per record, want 0", allocs)
	}
}

func TestMergeLatencyThroughTheEncodedHistogram(t *testing.T) {
	low, high := NewRecorder(1), NewRecorder(1)
	for us := 1; us <= 500; us++ {
		low.Lane(0).Record(time.Duration(us) * time.Microsecond)
		high.Lane(0).Record(time.Duration(us+500) * time.Microsecond)
	}
	high.Lane(0).Record(3 * time.Minute)
	merged, err := MergeLatency(low.Latency(), high.Latency(), Latency{})
	if err != nil {
		t.Fatal(err)
	}
	if merged.Count != 1001 || merged.Clamped != 1 {
		t.Fatalf("merged count %d clamped %d, want 1001 and 1", merged.Count, merged.Clamped)
	}
	if !near(merged.P50, 501*time.Microsecond) || !near(merged.P90, 901*time.Microsecond) {
		t.Errorf("merged p50 %v p90 %v, want 501us and 901us", merged.P50, merged.P90)
	}
	if _, err := MergeLatency(Latency{Count: 1, HDR: "not base64!"}); err == nil {
		t.Error("a corrupt encoded histogram merged")
	}
}

func BenchmarkLaneRecord(b *testing.B) {
	lane := NewRecorder(1).Lane(0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		lane.Record(time.Duration(i&0xfffff) * time.Nanosecond)
	}
}
