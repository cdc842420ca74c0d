//go:build linux || darwin

package broker

import (
	"time"

	"golang.org/x/sys/unix"
)

// monoClock turns a time.Time's monotonic reading into CLOCK_MONOTONIC
// nanoseconds: Go's monotonic clock is CLOCK_MONOTONIC offset by the
// process's start, so one pair of readings taken together fixes the
// offset, to within the half of the gap between them (tens of
// nanoseconds).
type monoClock struct {
	at   time.Time // the midpoint of two time.Now readings around mono
	mono int64
}

func newMonoClock() (monoClock, error) {
	var ts unix.Timespec
	before := time.Now()
	err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	after := time.Now()
	if err != nil {
		return monoClock{}, err
	}
	return monoClock{at: before.Add(after.Sub(before) / 2), mono: ts.Nano()}, nil
}

// of is t on CLOCK_MONOTONIC, in nanoseconds. t must carry a monotonic
// reading (time.Now's do).
func (c monoClock) of(t time.Time) int64 { return c.mono + int64(t.Sub(c.at)) }
