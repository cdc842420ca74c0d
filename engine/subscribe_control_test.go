package engine

import (
	"testing"

	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

// missedAsAReader counts the records a reader of got would call missed,
// as a client with FEATURE_CONTROL_EVENTS does: every gap, before a
// record or before a control record, but never a control record's own
// offset.
func missedAsAReader(from int64, got []segment.Record) (missed uint64, records []int64) {
	next := from
	for _, r := range got {
		missed += uint64(r.Offset - next)
		if r.Flags&segment.FlagControl == 0 {
			records = append(records, r.Offset)
		}
		next = r.Offset + 1
	}
	return missed, records
}

// A subscription with Control is handed the control records of history
// too, so its reader counts no drop where there was none; without
// Control they are skipped, as before.
func TestASubscriptionWithControlIsHandedTheControlRecordsOfHistory(t *testing.T) {
	e := openEngine(t, vfs.NewMem())
	defer e.Close()
	e.CreateStream(sid, StreamConfig{Durable: true})
	s, _ := e.Stream(sid)
	sh, _ := s.Shard(0)
	appendControl(t, sh) // 0, as a Quorum leadership's generation start
	publish(t, s, rec("", 1), rec("", 2))
	appendControl(t, sh) // 3
	publish(t, s, rec("", 4))

	with, _ := sh.Subscribe(SubscribeOptions{Start: StartEarliest, Control: true})
	defer with.Close()
	got := collect(t, with, 5)
	if missed, recs := missedAsAReader(0, got); missed != 0 || len(recs) != 3 {
		t.Fatalf("with Control: %d missed, records %v", missed, recs)
	}
	if st := with.Stats(); st.Delivered != 3 || st.Dropped != 0 {
		t.Fatalf("with Control: stats %+v, want 3 delivered", st)
	}
	without, _ := sh.Subscribe(SubscribeOptions{Start: StartEarliest})
	defer without.Close()
	got = collect(t, without, 3)
	if missed, _ := missedAsAReader(0, got); missed != 2 {
		t.Fatalf("without Control: %d missed, want the 2 control offsets", missed)
	}
}

// A full queue drops records by its policy but never a control record,
// which is queued past the bound: the reader's count of missed records is
// exactly the engine's Dropped, under DropNew and DropOld.
func TestAFullQueueDropsRecordsButNeverAControlRecord(t *testing.T) {
	for _, tc := range []struct {
		policy  Overflow
		want    []int64 // offsets handed over, control ones included
		dropped uint64
	}{
		// 0, 1 queued; 2 dropped; control 3 queued; 4, 6, 7 dropped; control 5 queued.
		{DropNew, []int64{0, 1, 3, 5}, 4},
		// each record past two drops the oldest record (0, 1, 2, 4), never
		// control 3 or 5, which move up over it.
		{DropOld, []int64{3, 5, 6, 7}, 4},
	} {
		e := openEngine(t, vfs.NewMem())
		e.CreateStream(sid, StreamConfig{Durable: true})
		s, _ := e.Stream(sid)
		sh, _ := s.Shard(0)
		sub, _ := sh.Subscribe(SubscribeOptions{Start: StartLatest, QueueRecords: 2, Overflow: tc.policy, Control: true})
		publish(t, s, rec("", 0), rec("", 1))
		publish(t, s, rec("", 2))
		appendControl(t, sh)
		publish(t, s, rec("", 4))
		appendControl(t, sh)
		publish(t, s, rec("", 6), rec("", 7))
		got := collect(t, sub, len(tc.want))
		var offs []int64
		for _, r := range got {
			offs = append(offs, r.Offset)
		}
		st := sub.Stats()
		if !equalOffsets(offs, tc.want) || st.Dropped != tc.dropped || st.Queued != 0 || st.Delivered != uint64(len(tc.want)-2) {
			t.Fatalf("%v: handed %v (want %v), stats %+v (want %d dropped)", tc.policy, offs, tc.want, st, tc.dropped)
		}
		publish(t, s, rec("", 8)) // the queue has room: a gap after the last one handed shows
		got = append(got, collect(t, sub, 1)...)
		if missed, _ := missedAsAReader(0, got); missed != tc.dropped {
			t.Fatalf("%v: the reader counts %d missed, the engine dropped %d", tc.policy, missed, tc.dropped)
		}
		sub.Close()
		e.Close()
	}
}

func equalOffsets(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
