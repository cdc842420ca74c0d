package group

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
)

// Every record a replicated shard's groups append goes at the generation
// its replication says this broker leads at, not the stream's, and the
// replica is told of each append; a new generation starts from what the
// logs hold (what was in flight is delivered again).
func TestAReplicatedGroupAppendsAtTheGenerationItLeads(t *testing.T) {
	f, parts := newReplicatedFixture(t, Options{})
	parts.lead(5)
	f.publish(10)
	d := f.poll("g", "c1", 5)
	f.ack("g", "c1", 0, 1, 2)
	if err := f.m.Reject(key("g"), "c1", []int64{3}, "bad"); err != nil {
		t.Fatal(err)
	}
	f.settled("g")
	if len(d) != 5 || f.describe("g").Cursor != 4 {
		t.Fatalf("polled %v, cursor %d; want 5 records and the cursor at 4", offsets(d), f.describe("g").Cursor)
	}
	cursors, dead := parts.part(t, engine.PartGroupCursors), parts.part(t, engine.PartDeadLetters)
	if cursors.appended.Load() == 0 || dead.appended.Load() == 0 {
		t.Fatalf("the replica was told of %d cursor and %d dead-letter appends", cursors.appended.Load(), dead.appended.Load())
	}
	checkGenerations(t, cursors, 5)
	checkGenerations(t, dead, 5)

	parts.lead(8) // this broker led again, at a later generation
	if err := f.m.Ack(key("g"), "c1", []int64{4}); !errors.Is(err, ErrNotClaimed) {
		t.Fatalf("an ack of a claim of generation 5 at generation 8: %v, want it refused (the claim was dropped)", err)
	}
	if d := f.poll("g", "c1", 1); len(d) != 1 || d[0].Offset != 4 {
		t.Fatalf("the first poll at generation 8 got %v, want offset 4 again", offsets(d))
	}
	f.ack("g", "c1", 4)
	recs := cursors.records(t)
	if last := recs[len(recs)-1]; last.Generation != 8 {
		t.Fatalf("the cursor record appended at generation 8 has generation %d", last.Generation)
	}
}

// checkGenerations fails unless every record of the part's log has gen.
func checkGenerations(t *testing.T, p *fakePart, gen uint32) {
	t.Helper()
	for _, r := range p.records(t) {
		if r.Generation != gen {
			t.Fatalf("part %d: offset %d has generation %d, want %d", p.log.Part, r.Offset, r.Generation, gen)
		}
	}
}

// A replica that does not lead the shard serves nothing of its groups
// and appends nothing to their logs, whatever Ownership says; a poll
// waiting when the leadership ends returns not-leader.
func TestAReplicatedGroupServesNothingWhileFollowing(t *testing.T) {
	f, parts := newReplicatedFixture(t, Options{})
	parts.lead(2)
	f.publish(6)
	f.poll("g", "c1", 3)
	f.poll("idle", "c1", 10) // everything claimed: its next poll waits
	waiting := f.pollAsync(context.Background(), "idle", "c1", time.Minute)
	f.clock.waitTimer(t)
	parts.follow()
	c0, d0, _, err := f.m.LogEnds(sid, 0)
	if err != nil {
		t.Fatal(err)
	}
	k := key("g")
	ops := map[string]func() error{
		"poll": func() error {
			_, err := f.m.Poll(context.Background(), PollRequest{Key: k, Consumer: "c1", Max: 1})
			return err
		},
		"ack":          func() error { return f.m.Ack(k, "c1", []int64{0}) },
		"nack":         func() error { return f.m.Nack(k, "c1", []int64{1}, 0) },
		"reject":       func() error { return f.m.Reject(k, "c1", []int64{2}, "x") },
		"extend":       func() error { return f.m.Extend(k, "c1", []int64{1}, time.Second) },
		"create":       func() error { return f.m.Create(key("new"), engine.StartEarliest, 0) },
		"delete":       func() error { return f.m.Delete(k) },
		"describe":     func() error { _, err := f.m.Describe(k); return err },
		"list":         func() error { _, err := f.m.List(sid, 0); return err },
		"dead letters": func() error { _, err := f.m.DeadLetters(k, 0, 10); return err },
		"redrive":      func() error { _, err := f.m.Redrive(k, nil); return err },
		"compact":      func() error { return f.m.Compact(sid, 0) },
	}
	for name, op := range ops {
		var nl *engine.NotLeaderError
		if err := op(); !errors.As(err, &nl) {
			t.Errorf("%s while following: %v, want *engine.NotLeaderError", name, err)
		}
	}
	if c, d, _, _ := f.m.LogEnds(sid, 0); c != c0 || d != d0 {
		t.Fatalf("the group logs moved while following: cursors %d -> %d, dead letters %d -> %d", c0, c, d0, d)
	}
	f.clock.advance(DefaultOwnershipRecheck)
	var nl *engine.NotLeaderError
	if r := receive(t, waiting); !errors.As(r.err, &nl) {
		t.Fatalf("a poll waiting when the leadership ended: %v %v, want *engine.NotLeaderError", offsets(r.d), r.err)
	}
}

// A replica that leads at a new generation resumes each group from what
// the logs hold, the records other leaders wrote and this replica
// appended as their follower included: cursors, groups, dead letters;
// and an operator's redrive of a dead letter it never saw works.
func TestAReplicatedGroupResumesFromWhatAnotherLeaderWrote(t *testing.T) {
	f, parts := newReplicatedFixture(t, Options{})
	parts.lead(2)
	f.publish(10)
	f.poll("g", "c1", 10)
	f.ack("g", "c1", 0, 1)
	parts.follow()
	// Another broker led at generation 3: g moved to 6 with a dead letter
	// at 5, h was made at 2. This replica appended it as a follower.
	parts.part(t, engine.PartGroupCursors).appendAsFollower(t, 3, cursorEntry("g", 6), cursorEntry("h", 2))
	parts.part(t, engine.PartDeadLetters).appendAsFollower(t, 3, deadEntryFor("g", deadEvent{kind: kindDead, offset: 5,
		deliveries: 5, reason: ReasonRejected, at: f.clock.Now().UnixNano(), detail: "c2: bad"}))

	parts.lead(4)
	if d := f.describe("g"); d.Cursor != 6 || d.DeadLetters != 1 || d.InFlight != 0 {
		t.Fatalf("g at generation 4: %+v, want the cursor at 6, one dead letter, nothing in flight", d)
	}
	if d := f.describe("h"); d.Cursor != 2 {
		t.Fatalf("h at generation 4: cursor %d, want 2", d.Cursor)
	}
	dead, err := f.m.DeadLetters(key("g"), 0, 10)
	if err != nil || len(dead) != 1 || dead[0].Offset != 5 || dead[0].Detail != "c2: bad" {
		t.Fatalf("dead letters at generation 4: %+v %v", dead, err)
	}
	if d := f.poll("g", "c1", 10); !slices.Equal(offsets(d), span(6, 10)) || d[0].Deliveries != 1 {
		t.Fatalf("g's first poll at generation 4: %v, want 6..9, first deliveries", offsets(d))
	}
	if n, err := f.m.Redrive(key("g"), []int64{5}); n != 1 || err != nil {
		t.Fatalf("redrive: %d %v", n, err)
	}
	if d := f.poll("g", "c1", 10); !slices.Equal(offsets(d), []int64{5}) {
		t.Fatalf("after the redrive: %v, want 5", offsets(d))
	}
}

// A compaction of a replicated group log keeps every record at or above
// the offset below which every follower holds the log (all of it where a
// follower may lack anything), and drops what is superseded below it.
func TestACompactionOfAReplicatedGroupLogKeepsWhatAFollowerMayLack(t *testing.T) {
	f, parts := newReplicatedFixture(t, Options{CompactRecords: 1 << 20, LogSegmentBytes: 1 << 10})
	parts.lead(2)
	f.publish(300)
	for range 300 {
		d := f.poll("g", "c1", 1)
		f.ack("g", "c1", offsets(d)...)
	}
	cursors := parts.part(t, engine.PartGroupCursors)
	all := cursors.records(t)
	if err := f.m.Compact(sid, 0); err != nil {
		t.Fatal(err)
	}
	if got := cursors.records(t); len(got) != len(all) {
		t.Fatalf("a compaction with CompactBelow 0 left %d of %d records", len(got), len(all))
	}
	below := all[len(all)-1].Offset - 50
	parts.setCompactBelow(below)
	if err := f.m.Compact(sid, 0); err != nil {
		t.Fatal(err)
	}
	var under, over []int64
	for _, r := range cursors.records(t) {
		if r.Offset < below {
			under = append(under, r.Offset)
		} else {
			over = append(over, r.Offset)
		}
	}
	if !slices.Equal(over, span(below, all[len(all)-1].Offset+1)) {
		t.Fatalf("at or above %d the compaction kept %v, want every record", below, over)
	}
	if len(under) >= int(below-all[0].Offset) {
		t.Fatalf("below %d the compaction kept %d records of %d: nothing dropped", below, len(under), below-all[0].Offset)
	}
	f.restart()
	parts.lead(3)
	if d := f.describe("g"); d.Cursor != 300 {
		t.Fatalf("after the compaction and a restart the cursor is %d, want 300", d.Cursor)
	}
}

// HoldReplicas opens a replicated shard's group logs on a replica that
// does not lead it and holds both, once however often it is called; they
// stay held across a Release and until the shard stops. A shard that does
// not replicate holds nothing.
func TestHoldReplicasHoldsBothGroupLogsUntilTheShardStops(t *testing.T) {
	f, parts := newReplicatedFixture(t, Options{})
	f.owner.set(false)
	for range 3 {
		if err := f.m.HoldReplicas(sid, 0); err != nil {
			t.Fatal(err)
		}
	}
	if held, holds := parts.held(); held != 2 || holds != 2 {
		t.Fatalf("%d parts held after %d holds, want both held once", held, holds)
	}
	sh, _ := f.stream.Shard(0)
	for part, dir := range map[int]string{engine.PartGroupCursors: cursorsDir, engine.PartDeadLetters: deadDir} {
		p := parts.part(t, part)
		if p.log.ID != sid || p.log.Shard != 0 || p.log.Cache || p.log.Dir != filepath.Join(sh.Dir(), groupsDir, dir) || p.log.Log == nil {
			t.Fatalf("part %d held as %+v", part, p.log)
		}
	}
	if _, _, _, err := f.m.LogEnds(sid, 0); err != nil {
		t.Fatalf("the follower's group logs: %v", err)
	}
	if err := f.m.Release(sid, 0); err != nil {
		t.Fatal(err)
	}
	if held, _ := parts.held(); held != 2 {
		t.Fatalf("%d parts held after a Release, want both", held)
	}
	other := engine.StreamID{Tenant: sid.Tenant, Namespace: sid.Namespace, Name: "unreplicated"}
	if _, err := f.eng.CreateStream(other, engine.StreamConfig{Durable: true}); err != nil {
		t.Fatal(err)
	}
	if err := f.m.HoldReplicas(other, 0); err != nil {
		t.Fatal(err)
	}
	if _, holds := parts.held(); holds != 2 {
		t.Fatalf("a stream of one replica had its group logs held (%d holds)", holds)
	}
	if err := f.eng.Close(); err != nil {
		t.Fatal(err)
	}
	if held, _ := parts.held(); held != 0 {
		t.Fatalf("%d parts still held once the engine stopped the shard", held)
	}
}

// An append of the groups that races the replica, which took the log for
// a new leader before Leading said this broker no longer leads, is
// refused as not-leader, and nothing of it lands among the new leader's
// records; while Leading still says this broker leads, the groups are
// rebuilt from the log that moved before they serve again.
func TestAReplicatedGroupAppendRacingTheReplicaIsRefused(t *testing.T) {
	f, parts := newReplicatedFixture(t, Options{})
	parts.lead(2)
	f.publish(5)
	f.poll("g", "c1", 5)
	f.ack("g", "c1", 0)
	cursors := parts.part(t, engine.PartGroupCursors)
	// A new leader sends a record written under generation 2 (by this
	// broker, or by another at 2); Leading still says generation 2.
	cursors.appendAsFollower(t, 2, cursorEntry("g", 4))
	end := cursors.log.Log.End()
	var nl *engine.NotLeaderError
	if err := f.m.Ack(key("g"), "c1", []int64{1}); !errors.As(err, &nl) {
		t.Fatalf("an ack once the replica moved the log: %v, want *engine.NotLeaderError", err)
	}
	if got := cursors.records(t); len(got) == 0 || got[len(got)-1].Offset != end-1 {
		t.Fatalf("the cursor log ends at %d, want the replica's record at %d last", cursors.log.Log.End(), end-1)
	}
	// Leading still says so: the replica put records in the log while this
	// broker leads (a catch-up), and the groups resume from what it holds.
	if d := f.describe("g"); d.Cursor != 4 || d.InFlight != 0 {
		t.Fatalf("g once the log that moved is read again: %+v, want the cursor at 4, nothing in flight", d)
	}
	f.ack("g", "c1", f.poll("g", "c1", 1)[0].Offset)
	if got := cursors.records(t); got[len(got)-1].Offset != end || got[len(got)-1].Generation != 2 {
		t.Fatalf("the ack after the rebuild appended offset %d of generation %d, want %d of 2",
			got[len(got)-1].Offset, got[len(got)-1].Generation, end)
	}
}
