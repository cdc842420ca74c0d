package bench

import (
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// The range and precision of every latency histogram. Frozen: encoded
// histograms in JSON results carry this geometry and are merged with it.
// Three significant digits hold from 1us (where 1ns is 0.1%) to
// LatencyHighest; below 1us values are exact to the nanosecond.
const (
	LatencyLowest  = time.Nanosecond  // smallest value told apart from zero
	LatencyHighest = 60 * time.Second // larger values are clamped and counted
	LatencyDigits  = 3                // significant decimal digits kept
)

// cacheLine keeps the atomic counters of two lanes off one cache line.
const cacheLine = 64

// Lane records the latencies and counts of one goroutine. Record, RecordN
// and Count may be called only by the lane's owner; Totals may be called from
// any goroutine at any time. Nothing in a Lane allocates after NewRecorder.
type Lane struct {
	_       [cacheLine]byte
	records atomic.Int64
	bytes   atomic.Int64
	_       [cacheLine - 16]byte
	hist    *hdrhistogram.Histogram
	clamped int64 // values above LatencyHighest, recorded as LatencyHighest
}

func newLane() *Lane {
	return &Lane{hist: newHistogram()}
}

func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(int64(LatencyLowest), int64(LatencyHighest), LatencyDigits)
}

// Record adds one latency sample.
func (l *Lane) Record(d time.Duration) {
	l.RecordN(d, 1)
}

// RecordN adds n samples of the same latency: a batch of n records that
// were acknowledged together each waited d. Negative latencies (a clock
// that stepped) count as zero; latencies above LatencyHighest count as
// LatencyHighest and are reported as clamped, never dropped.
func (l *Lane) RecordN(d time.Duration, n int64) {
	if n <= 0 {
		return
	}
	if d < 0 {
		d = 0
	}
	if d > LatencyHighest {
		d = LatencyHighest
		l.clamped += n
	}
	// In range and n > 0: RecordValues cannot fail short of 2^63 samples.
	_ = l.hist.RecordValues(int64(d), n)
}

// Count adds to the records and bytes this lane has moved. It is a plain
// atomic add on the lane's own cache line, so a progress line can read it
// while the owner works.
func (l *Lane) Count(records, bytes int64) {
	l.records.Add(records)
	l.bytes.Add(bytes)
}

// Totals returns the records and bytes counted so far.
func (l *Lane) Totals() (records, bytes int64) {
	return l.records.Load(), l.bytes.Load()
}

// Totals is anything that can say how far a measurement has come; read by
// progress lines while the measurement runs.
type Totals interface {
	Totals() (records, bytes int64)
}

// Recorder holds one Lane per concurrent writer; there is no lock and no
// shared counter on the recording path. Merge the lanes with Latency once
// every writer has stopped.
type Recorder struct {
	lanes []*Lane
}

// NewRecorder returns a recorder with lanes lanes (at least one).
func NewRecorder(lanes int) *Recorder {
	if lanes < 1 {
		lanes = 1
	}
	r := &Recorder{lanes: make([]*Lane, lanes)}
	for i := range r.lanes {
		r.lanes[i] = newLane()
	}
	return r
}

// Lane returns lane i, to be owned by one goroutine.
func (r *Recorder) Lane(i int) *Lane { return r.lanes[i] }

// Lanes returns the number of lanes.
func (r *Recorder) Lanes() int { return len(r.lanes) }

// Totals sums the records and bytes of every lane. Safe at any time.
func (r *Recorder) Totals() (records, bytes int64) {
	for _, l := range r.lanes {
		lr, lb := l.Totals()
		records += lr
		bytes += lb
	}
	return records, bytes
}

// Histogram merges every lane into a new histogram. Call it only once the
// lanes' owners have stopped recording.
func (r *Recorder) Histogram() (h *hdrhistogram.Histogram, clamped int64) {
	h = newHistogram()
	for _, l := range r.lanes {
		h.Merge(l.hist)
		clamped += l.clamped
	}
	return h, clamped
}

// Latency merges every lane and summarizes the result. Call it only once
// the lanes' owners have stopped recording.
func (r *Recorder) Latency() Latency {
	h, clamped := r.Histogram()
	return Summarize(h, clamped)
}
