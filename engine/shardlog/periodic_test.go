package shardlog

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/felixbroker/felix/segment/vfs"
)

// Under Periodic{interval} an acknowledged record is fsynced within the
// interval of being written, without anyone calling Sync.
func TestPeriodicSyncsWithinTheInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := vfs.NewMem()
		o := testOptions(mem, Periodic(200*time.Millisecond))
		o.SegmentBytes = 1 << 20
		l := mustOpen(t, o)
		defer l.Close()
		appendN(t, l, 0, 30)
		if l.Durable() == 30 {
			t.Fatal("records durable before any sync: the test proves nothing")
		}
		time.Sleep(200 * time.Millisecond)
		synctest.Wait()
		if l.Durable() != 30 {
			t.Fatalf("durable %d of 30 after one interval", l.Durable())
		}
		img := mem.Crash(vfs.DropUnsynced)
		l2 := mustOpen(t, testOptions(img, Periodic(200*time.Millisecond)))
		defer l2.Close()
		if l2.End() != 30 {
			t.Fatalf("%d of 30 records survived a crash one interval later", l2.End())
		}
	})
}

// Under Periodic the interval's promise holds across rollovers: the
// retired segments, sealed by the background loop, and the active one are
// all synced within the interval, and a crash then loses nothing.
func TestPeriodicSyncsRetiredSegmentsWithinTheInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := vfs.NewMem()
		o := testOptions(mem, Periodic(200*time.Millisecond))
		l := mustOpen(t, o)
		defer l.Close()
		appendN(t, l, 0, 200)
		if n := l.Stats().Segments; n < 4 {
			t.Fatalf("%d segments: the test wants several rollovers", n)
		}
		time.Sleep(200 * time.Millisecond)
		synctest.Wait()
		if st := l.Stats(); l.Durable() != 200 || st.UnsyncedBytes != 0 {
			t.Fatalf("after one interval: durable %d of 200, %+v", l.Durable(), st)
		}
		img := mem.Crash(vfs.DropUnsynced)
		l2 := mustOpen(t, testOptions(img, Periodic(200*time.Millisecond)))
		defer l2.Close()
		checkPrefix(t, readAll(t, l2), 0)
		if l2.End() != 200 {
			t.Fatalf("%d of 200 records survived a crash one interval later", l2.End())
		}
	})
}

// Under None nothing is synced on its own.
func TestNoneNeverSyncsOnItsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := testOptions(vfs.NewMem(), None())
		o.SegmentBytes = 1 << 20
		l := mustOpen(t, o)
		defer l.Close()
		appendN(t, l, 0, 10)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if l.Durable() != 0 {
			t.Fatalf("durable %d under None", l.Durable())
		}
	})
}

// Under None (and Periodic) the background loop syncs the active segment
// each time an eighth of a segment was written, so that the rollover's
// sync of the retired segment, which appenders wait behind, finds little
// left to flush.
func TestNoneSyncsAheadOfRolloverEveryEighthOfASegment(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := vfs.NewMem()
		o := testOptions(mem, None())
		o.SegmentBytes = 16 << 20 // sync ahead every 2 MiB
		l := mustOpen(t, o)
		defer l.Close()
		value := make([]byte, 256<<10)
		cw := &chanWaiter{ch: make(chan error, 1)}
		appendValues := func(n int) {
			for range n {
				if _, err := l.Append([]Entry{{Value: value}}, 1, cw); err != nil {
					t.Fatal(err)
				}
				if err := <-cw.ch; err != nil {
					t.Fatal(err)
				}
			}
		}
		appendValues(7) // under 2 MiB
		synctest.Wait()
		if l.Durable() != 0 {
			t.Fatalf("durable %d after less than an eighth of a segment", l.Durable())
		}
		appendValues(1) // the eighth passes 2 MiB
		synctest.Wait()
		if l.Durable() != 8 {
			t.Fatalf("durable %d of 8 after more than an eighth of a segment", l.Durable())
		}
		if st := l.Stats(); st.Segments != 1 {
			t.Fatalf("%d segments: a rollover, not the sync ahead, made the records durable", st.Segments)
		}
		img := mem.Crash(vfs.DropUnsynced)
		l2 := mustOpen(t, testOptions(img, None()))
		defer l2.Close()
		if l2.End() != 8 {
			t.Fatalf("%d of 8 synced-ahead records survived a crash", l2.End())
		}
	})
}
