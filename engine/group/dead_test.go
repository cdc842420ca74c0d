package group

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// A record delivered MaxDeliveries times is given up on: its dead letter,
// with the reason, is listed, survives a restart, no longer holds the
// cursor, and an operator's redrive makes it owed again, once.
func TestDeadLettersAreListedDurableAndRedriven(t *testing.T) {
	f := newFixture(t, Options{MaxDeliveries: 2, Visibility: 10 * time.Second})
	f.publish(4)
	f.poll("g", "c1", 2) // 0 and 1
	f.clock.advance(10 * time.Second)
	if d := f.poll("g", "c1", 2); !slices.Equal(offsets(d), []int64{0, 1}) || d[0].Deliveries != 2 {
		t.Fatalf("second delivery %+v", d)
	}
	if err := f.m.Nack(key("g"), "c1", []int64{0}, 0); err != nil {
		t.Fatal(err)
	}
	f.clock.advance(10 * time.Second) // 1 lapses a second time
	rest := f.poll("g", "c2", 10)
	if !slices.Equal(offsets(rest), []int64{2, 3}) {
		t.Fatalf("after giving up on 0 and 1 got %v", offsets(rest))
	}
	if err := f.m.Reject(key("g"), "c2", []int64{2}, "bad json"); err != nil {
		t.Fatal(err)
	}
	f.ack("g", "c2", 3)
	f.settled("g")
	want := []DeadLetter{
		{Offset: 0, Deliveries: 2, Reason: ReasonNacked},
		{Offset: 1, Deliveries: 2, Reason: ReasonLapsed},
		{Offset: 2, Deliveries: 1, Reason: ReasonRejected, Detail: "c2: bad json"},
	}
	checkDead(t, f, want)
	if d := f.describe("g"); d.Cursor != 4 || d.DeadLetters != 3 || d.DeadLettered != 3 {
		t.Fatalf("%+v", d)
	}
	f.restart()
	checkDead(t, f, want)
	if d := f.poll("g", "c1", 10); len(d) != 0 {
		t.Fatalf("dead letters delivered after a restart: %v", offsets(d))
	}
	if n, err := f.m.Redrive(key("g"), []int64{1, 3}); n != 1 || !errors.Is(err, ErrNotDead) {
		t.Fatalf("redrive of 1 and 3: %d %v", n, err)
	}
	got := f.poll("g", "c1", 10)
	if !slices.Equal(offsets(got), []int64{1}) || got[0].Deliveries != 1 || string(got[0].Value) != "v1" {
		t.Fatalf("redriven: %+v", got)
	}
	checkDead(t, f, []DeadLetter{want[0], want[2]})
	f.ack("g", "c1", 1)
	f.restart()
	if d := f.poll("g", "c1", 10); len(d) != 0 {
		t.Fatalf("an acked redriven record came back after a restart: %v", offsets(d))
	}
	if n, err := f.m.Redrive(key("g"), nil); n != 2 || err != nil {
		t.Fatalf("redrive all: %d %v", n, err)
	}
	f.restart() // a redrive is durable: still owed after a restart
	if got := f.poll("g", "c1", 10); !slices.Equal(sorted(offsets(got)), []int64{0, 2}) {
		t.Fatalf("redriven before the restart: %v", offsets(got))
	}
}

func checkDead(t *testing.T, f *fixture, want []DeadLetter) {
	t.Helper()
	got, err := f.m.DeadLetters(key("g"), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("dead letters %+v, want %+v", got, want)
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Offset != w.Offset || g.Deliveries != w.Deliveries || g.Reason != w.Reason || g.Detail != w.Detail || g.At.IsZero() {
			t.Fatalf("dead letter %d: %+v, want %+v", i, g, w)
		}
	}
}

// A dead letter holds the cursor until it is durable, then lets it pass;
// a later record unacked still holds it.
func TestTheCursorPassesADeadLetterOnlyOnceItIsDurable(t *testing.T) {
	f := newFixture(t, Options{MaxDeliveries: 1})
	f.publish(3)
	f.poll("g", "c1", 3)
	if err := f.m.Nack(key("g"), "c1", []int64{0}, 0); err != nil {
		t.Fatal(err)
	}
	f.ack("g", "c1", 1)
	f.settled("g")
	if d := f.describe("g"); d.Cursor != 2 || d.DeadLetters != 1 {
		t.Fatalf("%+v", d)
	}
}

// Redriven records are handed out oldest first, as the window's are,
// however many there are.
func TestRedrivenRecordsAreDeliveredInOffsetOrder(t *testing.T) {
	f := newFixture(t, Options{MaxDeliveries: 1})
	f.publish(40)
	d := f.poll("g", "c1", 40)
	var all []int64
	for _, r := range d {
		all = append(all, r.Offset)
	}
	if err := f.m.Reject(key("g"), "c1", all, "later"); err != nil {
		t.Fatal(err)
	}
	f.settled("g")
	if n, err := f.m.Redrive(key("g"), nil); n != 40 || err != nil {
		t.Fatalf("redrive all: %d %v", n, err)
	}
	if got := offsets(f.poll("g", "c2", 40)); !slices.Equal(got, all) {
		t.Fatalf("redriven records delivered in the order %v, want %v", got, all)
	}
}
