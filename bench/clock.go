package bench

import "time"

// Clock is the time a measurement runs on. Tests drive a fake one; real
// runs use SystemClock. Implementations are safe for concurrent use.
type Clock interface {
	Now() time.Time
	// SleepUntil returns once Now is at or after t (at once when it is).
	SleepUntil(t time.Time)
}

// SystemClock returns the monotonic wall clock of the process.
func SystemClock() Clock { return systemClock{} }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// SleepUntil sleeps through the timer. A wake-up later than t is not hidden:
// open-loop latency is measured from t, so scheduler lag counts against the
// system under test, as it would for a real client.
func (systemClock) SleepUntil(t time.Time) {
	if d := time.Until(t); d > 0 {
		time.Sleep(d)
	}
}
