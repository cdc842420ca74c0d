package bench

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakePipe answers each call after a fixed time of fake clock, tracks
// how many calls are in flight, and remembers the due times it was given.
type fakePipe struct {
	clock    *fakeClock
	answer   time.Duration
	inflight atomic.Int64
	peak     atomic.Int64
	failAt   int64 // the call number whose Await fails; 0: none
	calls    atomic.Int64

	mu  sync.Mutex
	due []time.Time
}

var errPipe = errors.New("pipe failed")

func (p *fakePipe) Send(_ int, due time.Time) (any, error) {
	n := p.inflight.Add(1)
	for old := p.peak.Load(); n > old && !p.peak.CompareAndSwap(old, n); old = p.peak.Load() {
	}
	p.mu.Lock()
	p.due = append(p.due, due)
	p.mu.Unlock()
	return p.calls.Add(1), nil
}

func (p *fakePipe) Await(_ int, pending any) (int64, int64, error) {
	p.inflight.Add(-1)
	if pending.(int64) == p.failAt {
		return 0, 0, errPipe
	}
	p.clock.Advance(p.answer)
	return 8, 800, nil
}

// A window of 4 keeps at most 4 calls in flight per worker, and every call
// sent is awaited and counted, records weighted.
func TestPipelineKeepsTheWindowAndCountsEveryCall(t *testing.T) {
	clock := newFakeClock()
	p := &fakePipe{clock: clock, answer: time.Microsecond}
	m, err := RunPipeline(context.Background(), Load{Workers: 3, Ops: 300, Clock: clock}, 4, nil, p)
	if err != nil {
		t.Fatal(err)
	}
	if m.Records != 300*8 || m.Bytes != 300*800 || m.Latency.Count != 300*8 {
		t.Fatalf("records %d bytes %d samples %d, want 2400, 240000, 2400", m.Records, m.Bytes, m.Latency.Count)
	}
	if peak := p.peak.Load(); peak > 3*4 {
		t.Fatalf("%d calls in flight at once, window 4 x 3 workers", peak)
	}
}

// Open-loop sends are handed their due times, the schedule's, whether or
// not a window slot was free when they were due.
func TestPipelineSendsAtTheScheduleAndMeasuresFromIt(t *testing.T) {
	clock := newFakeClock()
	p := &fakePipe{clock: clock, answer: 5 * time.Millisecond}
	start := clock.Now()
	m, err := RunPipeline(context.Background(), Load{Workers: 1, Ops: 10, Rate: 1000, Clock: clock}, 1, nil, p)
	if err != nil {
		t.Fatal(err)
	}
	for k, due := range p.due {
		if want := start.Add(time.Duration(k) * time.Millisecond); !due.Equal(want) {
			t.Fatalf("send %d due %v, want %v", k, due.Sub(start), want.Sub(start))
		}
	}
	// Each answer takes 5ms while one is due each 1ms: call k ends at
	// 5(k+1)ms and was due at k ms, so latency grows 5, 9, 13, ... 41ms.
	if !near(m.Latency.Min, 5*time.Millisecond) || !near(m.Latency.Max, 41*time.Millisecond) {
		t.Fatalf("latency min %v max %v, want 5ms and 41ms", m.Latency.Min, m.Latency.Max)
	}
}

// A failed answer stops every worker and is returned.
func TestPipelineStopsAtTheFirstError(t *testing.T) {
	clock := newFakeClock()
	p := &fakePipe{clock: clock, answer: time.Microsecond, failAt: 50}
	_, err := RunPipeline(context.Background(), Load{Workers: 2, Duration: time.Hour, Clock: clock}, 8, nil, p)
	if !errors.Is(err, errPipe) {
		t.Fatalf("err %v, want the pipe's", err)
	}
}

// A pipelined run's allocations are its setup's: none per call.
func TestPipelineAllocatesNothingPerCall(t *testing.T) {
	clock := newFakeClock()
	p := &nopPipe{clock: clock}
	run := func(ops int64) func() {
		return func() {
			if _, err := RunPipeline(context.Background(), Load{Workers: 2, Ops: ops, Clock: clock}, 8, nil, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	small, large := testing.AllocsPerRun(5, run(100)), testing.AllocsPerRun(5, run(20_000))
	if large > small+5 {
		t.Fatalf("%.0f allocations for 20,000 calls against %.0f for 100: some call allocates", large, small)
	}
}

// nopPipe answers at once with a pending value that needs no allocation.
type nopPipe struct{ clock *fakeClock }

func (p *nopPipe) Send(int, time.Time) (any, error) { return nil, nil }

func (p *nopPipe) Await(int, any) (int64, int64, error) {
	p.clock.Advance(time.Microsecond)
	return 1, 64, nil
}
