package group

import (
	"errors"
	"testing"
	"time"
)

// With DeadLetterMaxAge a dead letter older than it is dropped: no longer
// listed, counted or redriven, and a restart does not bring it back (the
// rebuild skips one that aged while the broker was down); a younger one
// stays, and compaction drops the records of those dropped.
func TestADeadLetterPastItsMaxAgeIsDropped(t *testing.T) {
	f := newFixture(t, Options{DeadLetterMaxAge: time.Hour})
	f.publish(2)
	f.poll("g", "c1", 2)
	if err := f.m.Reject(key("g"), "c1", []int64{0}, "old"); err != nil {
		t.Fatal(err)
	}
	f.settled("g")
	f.clock.advance(30 * time.Minute)
	if err := f.m.Reject(key("g"), "c1", []int64{1}, "young"); err != nil {
		t.Fatal(err)
	}
	f.settled("g")
	old := DeadLetter{Offset: 0, Deliveries: 1, Reason: ReasonRejected, Detail: "c1: old"}
	young := DeadLetter{Offset: 1, Deliveries: 1, Reason: ReasonRejected, Detail: "c1: young"}
	checkDead(t, f, []DeadLetter{old, young})

	f.clock.advance(31 * time.Minute) // 0 is 61 minutes old, 1 is 31
	checkDead(t, f, []DeadLetter{young})
	if d := f.describe("g"); d.DeadLetters != 1 {
		t.Fatalf("describe: %+v", d)
	}
	if n, err := f.m.Redrive(key("g"), []int64{0}); n != 0 || !errors.Is(err, ErrNotDead) {
		t.Fatalf("redrive of an expired dead letter: %d %v", n, err)
	}
	if n := f.m.Stats().DeadExpired; n != 1 {
		t.Fatalf("DeadExpired = %d", n)
	}
	if err := f.m.Compact(sid, 0); err != nil {
		t.Fatal(err)
	}
	f.restart()
	checkDead(t, f, []DeadLetter{young})

	f.clock.advance(30 * time.Minute) // 1 ages past the hour while stopped
	f.restart()
	checkDead(t, f, nil)
	if n := f.m.Stats().DeadExpired; n != 0 {
		t.Fatalf("the rebuild should have skipped it, yet the scan dropped %d", n)
	}
}

// Without DeadLetterMaxAge a dead letter is kept until redriven, however old.
func TestADeadLetterIsKeptWithoutAMaxAge(t *testing.T) {
	f := newFixture(t, Options{})
	f.publish(1)
	f.poll("g", "c1", 1)
	if err := f.m.Reject(key("g"), "c1", []int64{0}, "x"); err != nil {
		t.Fatal(err)
	}
	f.settled("g")
	f.clock.advance(365 * 24 * time.Hour)
	f.restart()
	checkDead(t, f, []DeadLetter{{Offset: 0, Deliveries: 1, Reason: ReasonRejected, Detail: "c1: x"}})
}
