package group

import (
	"context"
	"testing"
)

// Polling and acking in steady state, with dst and buf reused, allocate
// nothing, on a replicated shard too (its leadership asked at each).
func TestPollAndAckAllocateNothing(t *testing.T) {
	t.Run("alone", func(t *testing.T) { pollAndAckAllocateNothing(t, newFixture(t, Options{})) })
	t.Run("replicated", func(t *testing.T) {
		f, parts := newReplicatedFixture(t, Options{})
		parts.lead(2)
		pollAndAckAllocateNothing(t, f)
	})
}

func pollAndAckAllocateNothing(t *testing.T, f *fixture) {
	f.publish(3000)
	req := PollRequest{Key: key("g"), Consumer: "c1", Max: 10}
	var dst []Delivery
	var buf []byte
	offs := make([]int64, 0, 10)
	round := func() {
		var err error
		dst, buf, err = f.m.PollInto(context.Background(), req, dst[:0], buf[:0])
		if err != nil || len(dst) == 0 {
			t.Fatalf("poll: %d records, %v", len(dst), err)
		}
		offs = offs[:0]
		for _, d := range dst {
			offs = append(offs, d.Offset)
		}
		if err := f.m.Ack(key("g"), "c1", offs); err != nil {
			t.Fatal(err)
		}
	}
	for range 50 {
		round()
	}
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	if a := testing.AllocsPerRun(100, round); a > 0 {
		t.Fatalf("%.1f allocations per poll and ack", a)
	}
}
