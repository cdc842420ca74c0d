package store

import (
	"cmp"
	"slices"
	"sync"
	"time"
)

// Clock is where the in-memory store reads time and sets its lease timers.
// SystemClock is the time package, which inside a testing/synctest bubble
// is the bubble's fake clock; ManualClock moves only when told.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f on its own goroutine (SystemClock) or on the
	// goroutine that advances the clock (ManualClock) once d has passed.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc.
type Timer interface {
	// Stop prevents the call if it has not started; it reports whether it did.
	Stop() bool
}

// SystemClock is the time package's clock.
func SystemClock() Clock { return systemClock{} }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// ManualClock is a Clock that moves only on Advance, which runs every timer
// that falls due, in deadline order (ties in the order they were set), on
// the caller's goroutine. Safe for concurrent use.
type ManualClock struct {
	mu     sync.Mutex
	now    time.Time
	seq    uint64
	timers []*manualTimer
}

// NewManualClock starts a ManualClock at start.
func NewManualClock(start time.Time) *ManualClock { return &ManualClock{now: start} }

// Now is the clock's time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc sets a timer d from now; d <= 0 falls due at the next Advance.
func (c *ManualClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &manualTimer{clock: c, at: c.now.Add(d), seq: c.seq, f: f}
	c.timers = append(c.timers, t)
	return t
}

// Advance moves the clock d forward, running each timer as the clock
// reaches its deadline, so a timer sees Now equal to its deadline. Timers
// set by a timer run in the same Advance if they fall due within it.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	for {
		t := c.popDue(end)
		if t == nil {
			break
		}
		t.f()
	}
	c.mu.Lock()
	c.now = end
	c.mu.Unlock()
}

// popDue removes the earliest timer due by end and moves the clock to it.
func (c *ManualClock) popDue(end time.Time) *manualTimer {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.timers) == 0 {
		return nil
	}
	i := 0
	for j, t := range c.timers {
		if earlier(t, c.timers[i]) < 0 {
			i = j
		}
	}
	t := c.timers[i]
	if t.at.After(end) {
		return nil
	}
	c.timers = slices.Delete(c.timers, i, i+1)
	if t.at.After(c.now) {
		c.now = t.at
	}
	return t
}

func earlier(a, b *manualTimer) int {
	if c := a.at.Compare(b.at); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}

type manualTimer struct {
	clock *ManualClock
	at    time.Time
	seq   uint64
	f     func()
}

func (t *manualTimer) Stop() bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.Index(c.timers, t)
	if i < 0 {
		return false
	}
	c.timers = slices.Delete(c.timers, i, i+1)
	return true
}
