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
