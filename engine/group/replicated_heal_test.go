package group

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/segment/vfs"
	"github.com/felixbroker/felix/segment/vfs/errorfs"
)

// A replicated shard's cursor log reopened once space is back is held as
// the part in place of the one that failed (the old released first), and
// its appends go to the replica through the new part.
func TestAReplicatedGroupLogReopenedAfterRunningOutOfSpaceIsHeldAgain(t *testing.T) {
	mem := preparedReplicated(t, 300)
	synctest.Test(t, func(t *testing.T) {
		parts := &fakeParts{parts: map[int]*fakePart{}}
		opts := healOptions()
		opts.Replication = parts
		f := &fixture{t: t, fs: mem, efs: errorfs.Wrap(mem), clock: newFakeClock(), owner: &switchOwner{local: true},
			opts: opts, cfg: engine.StreamConfig{Durable: true, ReplicationFactor: 3}, rep: soloReplication{}}
		f.open()
		t.Cleanup(func() { f.m.Close(); f.eng.Close() })
		parts.lead(3)
		ds := offsets(f.poll("g", "c", 250))
		failed := parts.part(t, engine.PartGroupCursors)
		fillLog(f.efs, cursorsDir)
		n := untilRefused(t, ds, func(o int64) error { return f.m.Ack(key("g"), "c", []int64{o}) })
		time.Sleep(time.Minute)
		synctest.Wait()
		f.efs.Clear()
		time.Sleep(shardlog.HealBackoffMax)
		synctest.Wait()
		again := offsets(f.poll("g", "c", 300))
		if len(again) == 0 || again[0] > ds[n] {
			t.Fatalf("after the reopen the poll got %v; the ack of %d was refused", again, ds[n])
		}
		held := parts.part(t, engine.PartGroupCursors)
		if _, holds := parts.held(); held == failed || holds != 3 {
			t.Fatalf("after the reopen the cursor part is the failed one (%v) or was held %d times, want 3", held == failed, holds)
		}
		sh, _ := f.stream.Shard(0)
		if sg := f.m.shards[sh]; held.log.Log != sg.cursors.log() {
			t.Fatal("the part held is not the log the groups append to")
		}
		before := held.appended.Load()
		if err := f.m.Ack(key("g"), "c", again); err != nil {
			t.Fatalf("an ack once space is back: %v", err)
		}
		if held.appended.Load() == before {
			t.Fatal("the replica was not told of the ack's cursor record through the new part")
		}
		synctest.Wait() // the ack's cursor record visible
		if recs := held.visible(t); recs[len(recs)-1].Generation != 3 {
			t.Fatalf("the cursor record after the reopen has generation %d, want 3", recs[len(recs)-1].Generation)
		}
	})
}

// preparedReplicated is prepared for a stream of replication factor 3,
// led at generation 2 when it was written.
func preparedReplicated(t *testing.T, n int) *vfs.MemFS {
	t.Helper()
	f, parts := newReplicatedFixture(t, healOptions())
	parts.lead(2)
	f.publish(n)
	if err := f.m.Create(key("g"), engine.StartEarliest, 0); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(f.m.Close(), f.eng.Close()); err != nil {
		t.Fatal(err)
	}
	return f.fs
}
