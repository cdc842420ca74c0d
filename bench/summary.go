package bench

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// curveTicksPerHalf sets how finely Curve samples the distribution: this
// many points each time the remaining tail halves (HdrHistogram's own
// percentile iteration, as in its PercentilesPrint).
const curveTicksPerHalf = 5

// Latency summarizes one latency distribution. Every figure comes from an
// HdrHistogram (never from sorting samples by hand) and carries its
// histogram's precision: three significant digits. Durations are in
// nanoseconds in JSON.
type Latency struct {
	Count int64         `json:"count"`
	Min   time.Duration `json:"min_ns"`
	Mean  time.Duration `json:"mean_ns"`
	P50   time.Duration `json:"p50_ns"`
	P90   time.Duration `json:"p90_ns"`
	P99   time.Duration `json:"p99_ns"`
	P999  time.Duration `json:"p999_ns"`
	Max   time.Duration `json:"max_ns"`
	// Clamped counts samples above LatencyHighest, recorded as that value.
	Clamped int64 `json:"clamped,omitempty"`
	// Curve is the percentile distribution, ascending in Quantile, ending
	// at Quantile 1 (the maximum); what the report's chart draws.
	Curve []Point `json:"curve,omitempty"`
	// HDR is the whole histogram in HdrHistogram's base64 V2 compressed
	// encoding, readable by any HdrHistogram tool and by MergeLatency.
	HDR string `json:"hdr,omitempty"`
}

// Point is one point of a percentile curve: Quantile of the samples (0..1)
// were at most Value.
type Point struct {
	Quantile float64       `json:"q"`
	Value    time.Duration `json:"ns"`
}

// Summarize reads the figures of h. clamped is the number of samples that
// were clamped to LatencyHighest before they reached h.
func Summarize(h *hdrhistogram.Histogram, clamped int64) Latency {
	l := Latency{Count: h.TotalCount(), Clamped: clamped}
	if l.Count == 0 {
		return l
	}
	l.Min = time.Duration(h.Min())
	l.Mean = time.Duration(h.Mean())
	l.P50 = time.Duration(h.ValueAtQuantile(50))
	l.P90 = time.Duration(h.ValueAtQuantile(90))
	l.P99 = time.Duration(h.ValueAtQuantile(99))
	l.P999 = time.Duration(h.ValueAtQuantile(99.9))
	l.Max = time.Duration(h.Max())
	for _, b := range h.CumulativeDistributionWithTicks(curveTicksPerHalf) {
		l.Curve = append(l.Curve, Point{Quantile: b.Quantile / 100, Value: time.Duration(b.ValueAt)})
	}
	l.Curve = throughFigures(l.Curve, l)
	if enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
		l.HDR = string(enc)
	}
	return l
}

// throughFigures puts the reported percentiles on the curve, so a chart's
// line passes through the dots it marks them with. The curve stays sorted
// by quantile and never decreases.
func throughFigures(curve []Point, l Latency) []Point {
	for _, f := range []Point{{0.5, l.P50}, {0.9, l.P90}, {0.99, l.P99}, {0.999, l.P999}} {
		i, found := slices.BinarySearchFunc(curve, f.Quantile, func(p Point, q float64) int { return cmp.Compare(p.Quantile, q) })
		if found {
			curve[i].Value = f.Value
		} else {
			curve = slices.Insert(curve, i, f)
		}
	}
	for i := 1; i < len(curve); i++ {
		curve[i].Value = max(curve[i].Value, curve[i-1].Value)
	}
	return curve
}

// Histogram decodes the histogram l was summarized from.
func (l Latency) Histogram() (*hdrhistogram.Histogram, error) {
	if l.HDR == "" {
		return nil, fmt.Errorf("%w: none stored", ErrHistogram)
	}
	h, err := hdrhistogram.Decode([]byte(l.HDR))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrHistogram, err)
	}
	return h, nil
}

// MergeLatency merges the histograms behind ls (for example the same
// workload run on several machines) and summarizes the union.
func MergeLatency(ls ...Latency) (Latency, error) {
	sum := newHistogram()
	var clamped int64
	for _, l := range ls {
		if l.Count == 0 {
			continue
		}
		h, err := l.Histogram()
		if err != nil {
			return Latency{}, err
		}
		if dropped := sum.Merge(h); dropped != 0 {
			return Latency{}, fmt.Errorf("%w: %d samples outside the range", ErrHistogram, dropped)
		}
		clamped += l.Clamped
	}
	return Summarize(sum, clamped), nil
}
