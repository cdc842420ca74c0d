package main

import (
	"os"
	"strings"
	"testing"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/ring"
	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// A compacted log verifies: a compacted segment covers every offset up to
// the next segment's base, so the records it dropped from its end are no
// gap. (Recovery accepts it; felix log verify, the offline check, must
// too.)
func TestLogVerifyAcceptsTheGapsCompactionLeaves(t *testing.T) {
	dir := writeLog(t, 100)
	d, err := ring.Open(ring.Config{Mode: ring.ModePortable})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	l, err := shardlog.Open(shardlog.Options{FS: vfs.NewOS(d), Dir: dir, Fsync: shardlog.OnCommit(), SegmentBytes: 2048})
	if err != nil {
		t.Fatal(err)
	}
	st, err := l.Compact(func(r *segment.Record) bool { return r.Offset%10 == 0 })
	if err != nil || st.Kept == st.Records {
		t.Fatalf("compaction kept %d of %d: %v", st.Kept, st.Records, err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "log", "verify", dir)
	if err != nil {
		t.Fatalf("verify of a compacted log: %v\n%s", err, out)
	}
	contains(t, out, "verified", "offsets [0, 100)")
}

// A segment missing from the middle of a log that compaction did not write
// is a gap, and verify refuses it.
func TestLogVerifyRefusesAMissingSegment(t *testing.T) {
	dir := writeLog(t, 100)
	segs, err := listSegments(dir)
	if err != nil || len(segs) < 3 {
		t.Fatalf("%d segments: %v", len(segs), err)
	}
	if err := os.Remove(segs[1].path); err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI(t, "log", "verify", dir); err == nil || !strings.Contains(err.Error(), "starts at offset") {
		t.Fatalf("verify of a log with a segment missing: %v", err)
	}
}
