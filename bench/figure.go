package bench

import "time"

// Figure names one reported figure; the keys of Baseline.Ratios and the
// column names of CSV output. Frozen.
type Figure string

// The figures of a result.
const (
	FigRecordsPerSec Figure = "records_per_s"
	FigMBPerSec      Figure = "mb_per_s"
	FigP50           Figure = "p50"
	FigP90           Figure = "p90"
	FigP99           Figure = "p99"
	FigP999          Figure = "p999"
	FigMax           Figure = "max"
)

// Figures lists every figure in report order.
var Figures = []Figure{FigRecordsPerSec, FigMBPerSec, FigP50, FigP90, FigP99, FigP999, FigMax}

// IsLatency reports whether f is a latency (lower is better).
func (f Figure) IsLatency() bool {
	return f != FigRecordsPerSec && f != FigMBPerSec
}

// Figure returns the value of f in r: a rate, or a latency in nanoseconds;
// zero when r has no such figure.
func (r *Result) Figure(f Figure) float64 {
	return figureOf(f, r.RecordsPerSec, r.MBPerSec, r.Latency)
}

// Figure returns the value of f in b, like Result.Figure.
func (b *Baseline) Figure(f Figure) float64 {
	return figureOf(f, b.RecordsPerSec, b.MBPerSec, b.Latency)
}

func figureOf(f Figure, recordsPerSec, mbPerSec float64, l *Latency) float64 {
	switch f {
	case FigRecordsPerSec:
		return recordsPerSec
	case FigMBPerSec:
		return mbPerSec
	}
	if l == nil {
		return 0
	}
	return float64(l.At(f))
}

// At returns the latency figure f of l; zero for a throughput figure.
func (l *Latency) At(f Figure) time.Duration {
	switch f {
	case FigP50:
		return l.P50
	case FigP90:
		return l.P90
	case FigP99:
		return l.P99
	case FigP999:
		return l.P999
	case FigMax:
		return l.Max
	}
	return 0
}
