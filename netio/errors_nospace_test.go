package netio

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"testing"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/catalog"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
	"github.com/felixbroker/felix/segment/vfs/errorfs"
)

// told records the wire code each appended record was answered with (0:
// acknowledged).
type told struct {
	mu      sync.Mutex
	code    map[int64]wire.Code
	refused int // appends refused at once, storage_full
	wg      sync.WaitGroup
}

func (t *told) Committed(first, last int64, err error) {
	t.mu.Lock()
	for o := first; o <= last; o++ {
		t.code[o] = 0
		if err != nil {
			t.code[o] = toWire(err).Code
		}
	}
	t.mu.Unlock()
	t.wg.Done()
}

// The code table and the log agree on a full disk: whatever call fails
// with ENOSPC (a rollover's, a write's, part of a write), no record
// answered with a code that says "not applied" (storage_full: retryable,
// not ambiguous) is in the log after a restart, every record
// acknowledged is, and an append refused at once is storage_full.
func TestOnAFullDiskTheCodeSaysWhetherTheRecordMayBeInTheLog(t *testing.T) {
	rules := []errorfs.Rule{
		{Op: errorfs.Create, PathContains: segment.SegmentSuffix}, {Op: errorfs.Preallocate},
		{Op: errorfs.WriteSync, PathContains: segment.SegmentSuffix, Nth: 2},
		{Op: errorfs.WriteSync, PathContains: segment.SegmentSuffix, Nth: 3, ShortBy: 30},
		{Op: errorfs.Write, PathContains: segment.SegmentSuffix, Nth: 1, ShortBy: 30},
	}
	for _, r := range rules {
		r.Err = syscall.ENOSPC
		t.Run(fmt.Sprintf("%v#%d-short%d", r.Op, r.Nth, r.ShortBy), func(t *testing.T) {
			mem := vfs.NewMem()
			efs := errorfs.Wrap(mem)
			o := shardlog.Options{FS: efs, Dir: "/data/shard", Fsync: shardlog.OnCommit(), SegmentBytes: 4096, BufferBytes: 2048}
			l, err := shardlog.Open(o)
			if err != nil {
				t.Fatal(err)
			}
			efs.Inject(r)
			tl := &told{code: map[int64]wire.Code{}}
			for round := range 20 {
				for j := range 6 {
					entries := []shardlog.Entry{{Value: fmt.Appendf(nil, "r%d-%d-%080d", round, j, j)}, {Value: []byte("second")}}
					tl.wg.Add(1)
					if _, err := l.AppendWithoutWake(entries, 1, tl); err != nil {
						tl.wg.Done()
						if e := toWire(err); e.Code != wire.CodeStorageFull || e.Code.Ambiguous() || !e.Code.Retryable() {
							t.Fatalf("an append refused at once is %v (ambiguous %v): %v", e.Code, e.Code.Ambiguous(), err)
						}
						tl.refused++
					}
				}
				l.Wake()
				tl.wg.Wait()
			}
			l.Close()
			efs.Clear()
			if efs.Injected() == 0 {
				t.Fatal("the rule failed nothing")
			}
			checkTold(t, tl, shardlog.Options{FS: mem, Dir: o.Dir, Fsync: o.Fsync, SegmentBytes: o.SegmentBytes})
		})
	}
}

// checkTold opens the log again and holds each record's code to what the
// log holds.
func checkTold(t *testing.T, tl *told, o shardlog.Options) {
	t.Helper()
	l, err := shardlog.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	refused := tl.refused
	for off, code := range tl.code {
		in := off < l.End()
		switch {
		case code == 0 && !in:
			t.Fatalf("record %d was acknowledged and is not in the log", off)
		case code != 0 && !code.Ambiguous() && in:
			t.Fatalf("record %d was answered %v (not ambiguous) and is in the log", off, code)
		case code == wire.CodeStorageFull:
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("no record was answered storage_full")
	}
}

// A create refused for lack of space, of a stream or of a cache (its
// catalog), is storage_full; a log failure that may have written the
// record is storage_failed, which says it may be applied.
func TestNoSpaceSentinelsMapToTheirCodes(t *testing.T) {
	for _, c := range []struct {
		err  error
		want wire.Code
	}{
		{fmt.Errorf("create: %w: %w", engine.ErrNoSpace, syscall.ENOSPC), wire.CodeStorageFull},
		{fmt.Errorf("create: %w: %w", catalog.ErrNoSpace, syscall.ENOSPC), wire.CodeStorageFull},
		{fmt.Errorf("append: %w", shardlog.ErrNoSpace), wire.CodeStorageFull},
		{errors.Join(shardlog.ErrPoisoned, syscall.ENOSPC), wire.CodeStorageFailed},
	} {
		if got := toWire(c.err).Code; got != c.want {
			t.Errorf("%v: %v, want %v", c.err, got, c.want)
		}
	}
}
