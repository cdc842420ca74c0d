package group

import (
	"slices"
	"testing"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
)

// Retention outranks a group: records it removed before the group finished
// them are skipped, each counted, and the group goes on from the shard's
// start; a claim on a removed record ends (its late ack is a no-op).
func TestRetentionSkipsRecordsAndCountsEach(t *testing.T) {
	f := newFixtureWith(t, Options{}, engine.StreamConfig{Durable: true, Retention: shardlog.Retention{MaxBytes: 8 << 10}})
	f.publish(100)
	f.poll("g", "c1", 10)
	f.ack("g", "c1", span(0, 5)...)
	for range 5 {
		f.publish(100)
	}
	sh, _ := f.stream.Shard(0)
	if sh.ApplyRetention() == 0 {
		t.Fatal("retention removed nothing")
	}
	start := sh.Start()
	d := f.describe("g")
	if d.Cursor != start || d.RetentionSkips != uint64(start-5) || d.InFlight != 0 {
		t.Fatalf("start %d: %+v", start, d)
	}
	if st := f.m.Stats(); st.RetentionSkips != uint64(start-5) {
		t.Fatalf("stats %+v", st)
	}
	f.ack("g", "c1", 7)
	got := f.poll("g", "c1", 3)
	if !slices.Equal(offsets(got), span(start, start+3)) {
		t.Fatalf("after retention got %v", offsets(got))
	}
	f.restart()
	if d := f.describe("g"); d.Cursor != start {
		t.Fatalf("after a restart: %+v", d)
	}
}

// A redriven record that retention removed before it was delivered again
// is skipped and counted too.
func TestARedrivenRecordRetentionRemovedIsSkipped(t *testing.T) {
	f := newFixtureWith(t, Options{MaxDeliveries: 1}, engine.StreamConfig{Durable: true, Retention: shardlog.Retention{MaxBytes: 8 << 10}})
	f.publish(10)
	f.poll("g", "c1", 10)
	if err := f.m.Reject(key("g"), "c1", []int64{3}, "no"); err != nil {
		t.Fatal(err)
	}
	f.ack("g", "c1", 0, 1, 2, 4, 5, 6, 7, 8, 9)
	f.settled("g")
	if n, err := f.m.Redrive(key("g"), nil); n != 1 || err != nil {
		t.Fatalf("redrive %d %v", n, err)
	}
	for range 5 {
		f.publish(100)
	}
	sh, _ := f.stream.Shard(0)
	sh.ApplyRetention()
	d := f.describe("g") // the redriven record, and every one the group had not reached
	if d.RetentionSkips != uint64(1+sh.Start()-10) || d.Owed != 0 || d.DeadLetters != 0 {
		t.Fatalf("start %d: %+v", sh.Start(), d)
	}
	if got := f.poll("g", "c1", 1); got[0].Offset != sh.Start() {
		t.Fatalf("got %v, shard starts at %d", offsets(got), sh.Start())
	}
}
