package group

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/felixbroker/felix/engine"
)

// A group starts at the shard's earliest record, its latest, or an offset;
// deleting it forgets its cursor and its dead letters, for good.
func TestGroupsAreCreatedAtAStartAndDeleted(t *testing.T) {
	f := newFixture(t, Options{MaxDeliveries: 1})
	f.publish(5)
	for _, c := range []struct {
		name   string
		start  engine.StartKind
		offset int64
		want   []int64
	}{{"early", engine.StartEarliest, 0, span(0, 5)}, {"late", engine.StartLatest, 0, nil}, {"mid", engine.StartOffset, 3, span(3, 5)}} {
		if err := f.m.Create(key(c.name), c.start, c.offset); err != nil {
			t.Fatal(err)
		}
		if got := f.poll(c.name, "c1", 10); !slices.Equal(offsets(got), c.want) {
			t.Fatalf("%s: got %v, want %v", c.name, offsets(got), c.want)
		}
	}
	if err := f.m.Create(key("mid"), engine.StartEarliest, 0); !errors.Is(err, ErrExists) {
		t.Fatalf("create twice: %v", err)
	}
	if err := f.m.Create(key("far"), engine.StartOffset, 6); !errors.Is(err, engine.ErrOffsetPastEnd) {
		t.Fatalf("create past the end: %v", err)
	}
	f.publish(1)
	if got := f.poll("late", "c1", 10); !slices.Equal(offsets(got), []int64{5}) {
		t.Fatalf("late got %v", offsets(got))
	}
	if err := f.m.Reject(key("early"), "c1", []int64{0}, "x"); err != nil {
		t.Fatal(err)
	}
	f.settled("early")
	if err := f.m.Delete(key("early")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.m.Describe(key("early")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("describe a deleted group: %v", err)
	}
	f.restart()
	names := func() (out []string) {
		list, err := f.m.List(sid, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range list {
			out = append(out, d.Key.Group)
		}
		return out
	}
	if got := names(); !slices.Equal(got, []string{"late", "mid"}) {
		t.Fatalf("groups after a restart: %v", got)
	}
	if got := f.poll("early", "c1", 10); len(got) != 6 || got[0].Deliveries != 1 {
		t.Fatalf("a group created again under a deleted name got %v", offsets(got))
	}
	if dead, _ := f.m.DeadLetters(key("early"), 0, 10); len(dead) != 0 {
		t.Fatalf("dead letters of the deleted group came back: %+v", dead)
	}
}

// Bad requests are refused before anything is done.
func TestBadRequestsAreRefused(t *testing.T) {
	f := newFixture(t, Options{})
	for _, req := range []PollRequest{
		{Key: key("g"), Consumer: "c", Max: 0},
		{Key: key("g"), Consumer: "c", Max: PollRecordsMax + 1},
		{Key: key("g"), Consumer: "", Max: 1},
		{Key: key("a/b"), Consumer: "c", Max: 1},
		{Key: key("g"), Consumer: "c", Max: 1, Wait: WaitMax + 1},
	} {
		if _, err := f.m.Poll(t.Context(), req); !errors.Is(err, ErrInvalid) && !errors.Is(err, engine.ErrInvalidName) {
			t.Fatalf("%+v: %v", req, err)
		}
	}
	if err := f.m.Ack(key("g"), "c", nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("ack of nothing: %v", err)
	}
	if err := f.m.Nack(key("g"), "c", []int64{0}, -time.Second); !errors.Is(err, ErrInvalid) {
		t.Fatalf("negative delay: %v", err)
	}
	if err := f.m.Ack(key("nobody"), "c", []int64{0}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("ack in a group that does not exist: %v", err)
	}
	if err := f.m.Reject(key("g"), "c", []int64{0}, strings.Repeat("x", DetailBytesMax+1)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("long detail: %v", err)
	}
}

// Both group logs are compacted as they grow: what stays on disk is about
// the live state, and a restart finds every cursor and dead letter.
func TestGroupLogsAreCompactedAndStillRebuild(t *testing.T) {
	f := newFixture(t, Options{MaxDeliveries: 1, CompactRecords: 100, LogSegmentBytes: 4 << 10})
	f.publish(2000)
	for _, name := range []string{"a", "b", "c"} {
		for range 400 { // 400 dead letters, 400 cursor records
			d := f.poll(name, "c1", 5)
			if err := f.m.Reject(key(name), "c1", offsets(d)[:1], "first"); err != nil {
				t.Fatal(err)
			}
			f.ack(name, "c1", offsets(d)[1:]...)
		}
		f.settled(name)
		if n, err := f.m.Redrive(key(name), nil); n != 400 || err != nil {
			t.Fatalf("redrive: %d %v", n, err)
		}
		for d := f.poll(name, "c1", 50); len(d) > 0; d = f.poll(name, "c1", 50) {
			f.ack(name, "c1", offsets(d)...) // each redriven record done
		}
	}
	f.publish(2)
	last := f.poll("c", "c1", 2)
	if err := f.m.Reject(key("c"), "c1", offsets(last), "kept"); err != nil {
		t.Fatal(err)
	}
	f.settled("c")
	want := map[string]Description{}
	for _, name := range []string{"a", "b", "c"} {
		want[name] = f.describe(name)
	}
	if err := f.m.Compact(sid, 0); err != nil {
		t.Fatal(err)
	}
	f.restart()
	for _, log := range []string{cursorsDir, deadDir} {
		if size := dirBytes(t, f, log); size > 16<<10 {
			t.Fatalf("the %s log holds %d bytes after compaction", log, size)
		}
	}
	for name, w := range want {
		if d := f.describe(name); d.Cursor != w.Cursor || d.DeadLetters != w.DeadLetters || d.Owed != w.Owed {
			t.Fatalf("%s after a restart: %+v, before %+v", name, d, w)
		}
	}
	if dead, _ := f.m.DeadLetters(key("c"), 0, 10); len(dead) != 2 || dead[0].Offset != 2000 || dead[1].Detail != "c1: kept" {
		t.Fatalf("dead letters after compaction and a restart: %+v", dead)
	}
}

func dirBytes(t *testing.T, f *fixture, log string) int64 {
	t.Helper()
	sh, _ := f.stream.Shard(0)
	dir := filepath.Join(sh.Dir(), groupsDir, log)
	names, err := f.fs.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	for _, n := range names {
		size, err := f.fs.Stat(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(fmt.Errorf("%s: %w", n, err))
		}
		total += size
	}
	return total
}
