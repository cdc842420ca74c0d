package bench

import (
	"errors"
	"math"
	"testing"
	"time"
)

func TestScheduleDueTimes(t *testing.T) {
	start := newFakeClock().Now()
	s, err := NewSchedule(start, 4000)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range []time.Duration{0, 250 * time.Microsecond, 500 * time.Microsecond} {
		if got := s.Due(uint64(k)).Sub(start); got != want {
			t.Errorf("due(%d) = +%v, want +%v", k, got, want)
		}
	}
	// No drift after a billion sends: the due time is computed, not summed.
	if got := s.Due(1_000_000_000).Sub(start); got != 250_000*time.Second {
		t.Errorf("due(1e9) = +%v, want +250000s", got)
	}
}

func TestPacersOfLanesShareTheScheduleWithoutOverlap(t *testing.T) {
	start := newFakeClock().Now()
	s, _ := NewSchedule(start, 1000)
	const lanes = 3
	seen := map[time.Duration]int{}
	for lane := 0; lane < lanes; lane++ {
		p := s.Pacer(lane, lanes)
		for range 4 {
			seen[p.Next().Sub(start)]++
		}
	}
	for k := 0; k < 4*lanes; k++ {
		if due := time.Duration(k) * time.Millisecond; seen[due] != 1 {
			t.Errorf("send due at +%v taken %d times, want once", due, seen[due])
		}
	}
}

func TestPacerWaitsWhenEarlyAndNotWhenLate(t *testing.T) {
	clock := newFakeClock()
	s, _ := NewSchedule(clock.Now(), 100) // one send every 10ms
	p := s.Pacer(0, 1)
	if due := p.Wait(clock); !due.Equal(s.Start) || !clock.Now().Equal(s.Start) {
		t.Fatalf("first send due %v at %v, want both at the start", due, clock.Now())
	}
	if due := p.Wait(clock); !clock.Now().Equal(due) || due.Sub(s.Start) != 10*time.Millisecond {
		t.Fatalf("second send due +%v, clock at +%v, want both at +10ms", due.Sub(s.Start), clock.Now().Sub(s.Start))
	}
	clock.Advance(35 * time.Millisecond) // a stall: sends at +20 and +30 are late
	for _, want := range []time.Duration{20, 30} {
		before := clock.Now()
		due := p.Wait(clock)
		if due.Sub(s.Start) != want*time.Millisecond || !clock.Now().Equal(before) {
			t.Fatalf("late send due +%v (want +%vms) moved the clock by %v", due.Sub(s.Start), want, clock.Now().Sub(before))
		}
	}
}

func TestPacingAllocatesNothing(t *testing.T) {
	clock := newFakeClock()
	s, _ := NewSchedule(clock.Now(), 1e6)
	p := s.Pacer(1, 2)
	if allocs := testing.AllocsPerRun(1000, func() { p.Wait(clock) }); allocs != 0 {
		t.Errorf("%v allocations per send, want 0", allocs)
	}
}

func TestScheduleRejectsBadRates(t *testing.T) {
	for _, rate := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, err := NewSchedule(time.Time{}, rate); !errors.Is(err, ErrBadRate) {
			t.Errorf("rate %v: err %v, want ErrBadRate", rate, err)
		}
	}
}
