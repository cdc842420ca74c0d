package shardlog

import (
	"testing"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// Retention removes a segment's file when its last reader lets go, so an
// older segment a reader (the verifier, a subscriber) still holds can
// outlive a newer one. A crash then must not leave the log with a gap: the
// start retention moved to is durable before any file goes, and recovery
// finishes the removal. Before, the reopened log started at the held
// segment, ran into the gap, and its verifier took it offline.
func TestACrashWhileRetentionWaitsForAReaderLeavesNoGap(t *testing.T) {
	mem := vfs.NewMem()
	o := testOptions(mem, OnCommit())
	o.Retention = Retention{MaxBytes: 8000}
	l := mustOpen(t, o)
	appendN(t, l, 0, 300)
	list := *l.segs.Load()
	if len(list) < 5 {
		t.Fatalf("want at least 5 segments, have %d", len(list))
	}
	held := list[0]
	if !held.acquire() { // a reader in the oldest segment
		t.Fatal("could not hold the oldest segment")
	}
	segs, _ := l.ApplyRetention()
	if segs < 2 {
		t.Fatalf("retention removed %d segments, want at least 2", segs)
	}
	start := l.Start()
	image := mem.Crash(vfs.DropUnsynced) // the held segment's file is still there
	if _, err := image.Stat(held.path); err != nil {
		t.Fatalf("the held segment's file is gone before its reader let go: %v", err)
	}
	o.FS = image
	again := mustOpen(t, o)
	defer again.Close()
	<-again.Verified()
	if err := again.Offline(); err != nil {
		t.Fatalf("after the crash the log went offline: %v", err)
	}
	if again.Start() != start || again.End() != 300 {
		t.Fatalf("after the crash the log holds [%d, %d), want [%d, 300)", again.Start(), again.End(), start)
	}
	checkPrefix(t, readAll(t, again), start)
	names, _ := image.List(testDir)
	for _, n := range names {
		if base, _, ok := segment.ParseName(n); ok && base < start {
			t.Fatalf("%s is still on disk below the start %d", n, start)
		}
	}
	held.release(mem)
	l.Close()
}
