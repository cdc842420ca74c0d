package bench

import (
	"math"
	"time"
)

// Schedule is an open-loop send schedule: send k is due at
// Start + k/Rate seconds, whether or not earlier sends have been answered.
// Latency measured from the due time (not from when a send really left)
// counts the time a request spent waiting behind a stalled one, so a stall
// cannot hide itself by slowing the sender down (coordinated omission).
type Schedule struct {
	Start time.Time
	Rate  float64 // sends per second, all lanes together
}

// NewSchedule checks rate and returns the schedule.
func NewSchedule(start time.Time, rate float64) (Schedule, error) {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return Schedule{}, ErrBadRate
	}
	return Schedule{Start: start, Rate: rate}, nil
}

// Due returns the due time of send k of the whole schedule.
func (s Schedule) Due(k uint64) time.Time {
	return s.Start.Add(time.Duration(float64(k) * 1e9 / s.Rate))
}

// Pacer returns the part of s that lane (of lanes) sends: sends lane,
// lane+lanes, lane+2*lanes, ... so lanes workers together keep the whole
// schedule, and no two share a due time.
func (s Schedule) Pacer(lane, lanes int) Pacer {
	if lanes < 1 || lane < 0 || lane >= lanes {
		panic("felix/bench: pacer lane out of range (bug in caller)")
	}
	return Pacer{s: s, next: uint64(lane), step: uint64(lanes)}
}

// Pacer yields the due times of one worker's sends. It is owned by one
// goroutine and allocates nothing.
type Pacer struct {
	s    Schedule
	next uint64 // index in s of the next send
	step uint64
}

// Next returns the due time of the next send and moves past it.
func (p *Pacer) Next() time.Time {
	t := p.s.Due(p.next)
	p.next += p.step
	return t
}

// Peek returns the due time of the next send without moving.
func (p *Pacer) Peek() time.Time { return p.s.Due(p.next) }

// Wait sleeps on c until the next send is due and returns its due time,
// the instant latency is measured from. When the worker is already late it
// returns at once: the backlog is sent as fast as possible, never skipped.
func (p *Pacer) Wait(c Clock) time.Time {
	due := p.Next()
	c.SleepUntil(due)
	return due
}
