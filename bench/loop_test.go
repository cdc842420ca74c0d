package bench

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// stallFirst returns an op that takes 10ms of fake time on its first call
// and 100us on every later one.
func stallFirst(clock *fakeClock) Op {
	var calls atomic.Int64
	return func(int) (int64, int64, error) {
		if calls.Add(1) == 1 {
			clock.Advance(10 * time.Millisecond)
		} else {
			clock.Advance(100 * time.Microsecond)
		}
		return 1, 64, nil
	}
}

// With one send due every 1ms and the first stalling 10ms, sends 1..9 are
// each due k ms but finish at 10+0.1k ms: open-loop latency counts that
// wait (10, 9.1, 8.2, ... 1.9ms), closed-loop latency hides it (0.1ms).
func TestOpenLoopCountsTheWaitBehindAStall(t *testing.T) {
	clock := newFakeClock()
	m, err := Run(context.Background(), Load{Workers: 1, Ops: 10, Rate: 1000, Clock: clock}, nil, stallFirst(clock))
	if err != nil {
		t.Fatal(err)
	}
	if m.Records != 10 || m.Bytes != 640 || m.Elapsed != 10900*time.Microsecond {
		t.Fatalf("records %d bytes %d elapsed %v, want 10, 640, 10.9ms", m.Records, m.Bytes, m.Elapsed)
	}
	if want := 5500 * time.Microsecond; !near(m.Latency.P50, want) {
		t.Errorf("open-loop p50 %v, want %v", m.Latency.P50, want)
	}
	if want := 1900 * time.Microsecond; !near(m.Latency.Min, want) {
		t.Errorf("open-loop min %v, want %v", m.Latency.Min, want)
	}
}

func TestClosedLoopMeasuresFromTheCall(t *testing.T) {
	clock := newFakeClock()
	m, err := Run(context.Background(), Load{Workers: 1, Ops: 10, Clock: clock}, nil, stallFirst(clock))
	if err != nil {
		t.Fatal(err)
	}
	if !near(m.Latency.P50, 100*time.Microsecond) || !near(m.Latency.Max, 10*time.Millisecond) {
		t.Errorf("closed-loop p50 %v max %v, want 100us and 10ms", m.Latency.P50, m.Latency.Max)
	}
	if m.Elapsed != 10900*time.Microsecond {
		t.Errorf("elapsed %v, want 10.9ms", m.Elapsed)
	}
}

func TestOpenLoopWaitIsNotLatency(t *testing.T) {
	clock := newFakeClock()
	op := func(int) (int64, int64, error) {
		clock.Advance(100 * time.Microsecond)
		return 1, 0, nil
	}
	// Due at 0..4ms; the one due at the 5ms deadline is never sent.
	m, err := Run(context.Background(), Load{Workers: 1, Duration: 5 * time.Millisecond, Rate: 1000, Clock: clock}, nil, op)
	if err != nil {
		t.Fatal(err)
	}
	if m.Records != 5 || !near(m.Latency.Max, 100*time.Microsecond) {
		t.Errorf("records %d max %v, want 5 and 100us", m.Records, m.Latency.Max)
	}
}

func TestBatchLatencyIsWeightedByRecords(t *testing.T) {
	clock := newFakeClock()
	var calls atomic.Int64
	op := func(int) (int64, int64, error) {
		if calls.Add(1) == 1 {
			clock.Advance(time.Millisecond)
			return 99, 0, nil // one slow batch of 99 records
		}
		clock.Advance(time.Microsecond)
		return 1, 0, nil
	}
	m, err := Run(context.Background(), Load{Workers: 1, Ops: 2, Clock: clock}, nil, op)
	if err != nil {
		t.Fatal(err)
	}
	if m.Latency.Count != 100 || !near(m.Latency.P50, time.Millisecond) {
		t.Errorf("count %d p50 %v, want 100 samples and 1ms", m.Latency.Count, m.Latency.P50)
	}
}

func TestOpsAreSplitBetweenWorkers(t *testing.T) {
	rec := NewRecorder(3)
	var perWorker [3]atomic.Int64
	op := func(w int) (int64, int64, error) {
		perWorker[w].Add(1)
		return 2, 10, nil
	}
	m, err := Run(context.Background(), Load{Workers: 3, Ops: 10}, rec, op)
	if err != nil {
		t.Fatal(err)
	}
	for w, want := range []int64{4, 3, 3} {
		if got := perWorker[w].Load(); got != want {
			t.Errorf("worker %d made %d calls, want %d", w, got, want)
		}
	}
	if m.Records != 20 || m.Bytes != 100 {
		t.Errorf("records %d bytes %d, want 20 and 100", m.Records, m.Bytes)
	}
}

func TestFirstErrorStopsEveryWorker(t *testing.T) {
	boom := errors.New("boom")
	var calls atomic.Int64
	op := func(w int) (int64, int64, error) {
		if calls.Add(1) == 50 {
			return 0, 0, boom
		}
		return 1, 0, nil
	}
	_, err := Run(context.Background(), Load{Workers: 4, Ops: 1 << 40}, nil, op)
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want boom", err)
	}
}

func TestCancelledContextStopsTheRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int64
	op := func(int) (int64, int64, error) {
		if calls.Add(1) == 10 {
			cancel()
		}
		return 1, 0, nil
	}
	m, err := Run(ctx, Load{Workers: 2, Ops: 1 << 40}, nil, op)
	if !errors.Is(err, context.Canceled) || m.Records < 10 {
		t.Fatalf("err %v after %d records, want context.Canceled after at least 10", err, m.Records)
	}
}

func TestRunRejectsBadLoads(t *testing.T) {
	op := func(int) (int64, int64, error) { return 1, 0, nil }
	cases := []struct {
		load Load
		rec  *Recorder
		want error
	}{
		{Load{Workers: 1}, nil, ErrNoLimit},
		{Load{Workers: 2, Ops: 1}, NewRecorder(1), ErrLanes},
		{Load{Workers: 1, Ops: 1, Rate: -5}, nil, ErrBadRate},
	}
	for _, c := range cases {
		if _, err := Run(context.Background(), c.load, c.rec, op); !errors.Is(err, c.want) {
			t.Errorf("%+v: err %v, want %v", c.load, err, c.want)
		}
	}
}
